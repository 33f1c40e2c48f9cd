package main

import (
	"fmt"
	"strings"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/zkproc"
)

// checkZooKeeper checks --zookeeper (given as raw): members that are
// host:port, only without --targets. Without it, a zookeeper row asked
// for by --modes runs on an ensemble the load generator starts (zkproc)
// where java and Debian's zookeeper are installed, and is an error where
// they are not. The default rows (defaultModes) leave it out and say so,
// with the command that runs it: a freshly started ensemble's three JVMs
// on this machine's two cores answered most of the row's orders with
// 503s and took the run past its time (see the chapter).
func checkZooKeeper(c *config, raw string, defaultModes bool) []string {
	var bad []string
	if raw != "" && len(c.zookeeper) == 0 {
		bad = append(bad, fmt.Sprintf("zookeeper: %q: no member in it", raw))
	}
	if err := app.CheckZooKeeper(c.zookeeper); err != nil {
		bad = append(bad, strings.TrimPrefix(err.Error(), "--"))
	}
	if len(c.targets) > 0 && len(c.zookeeper) > 0 {
		bad = append(bad, "zookeeper: only without --targets; a running fleet has its own ensemble")
	}
	if len(c.targets) > 0 || len(c.zookeeper) > 0 {
		return bad
	}
	_, _, missing := zkproc.Binaries()
	if defaultModes {
		c.zkSkipped = "zookeeper: skipped: --modes etcd,zookeeper runs it on a local ensemble the load generator starts"
		if missing != nil {
			c.zkSkipped = "zookeeper: skipped, no ensemble: " + zkproc.InstallHint + " (java and Debian's zookeeper) enables it, or --zookeeper host:port,..."
		}
		return bad
	}
	for _, m := range c.settings.Modes {
		if m.Strategy() == strategy.ZooKeeper && missing == nil {
			c.startZK = true
			break
		}
		if m.Strategy() == strategy.ZooKeeper {
			bad = append(bad, "modes: zookeeper needs --zookeeper host:port,... (no ZooKeeper server runs in process: "+
				zkproc.InstallHint+", then go run ./internal/zkproc/zkensemble start -dir DIR)")
			break
		}
	}
	return bad
}
