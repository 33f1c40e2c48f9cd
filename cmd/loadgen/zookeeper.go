package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/scenario"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/internal/zkproc"
)

// checkZooKeeper checks --zookeeper (given as raw): members that are
// host:port, only without --targets. Without it, the zookeeper row runs
// on an ensemble the load generator starts (zkproc) where java and
// Debian's zookeeper are installed. Where they are not, the default rows
// (defaultModes) show it as skipped, with the command that enables it,
// and a --modes that names it is an error. Against --targets the default
// rows skip it too: the load generator cannot tell whether the fleet's
// shops have an ensemble, and --modes that names it runs it there.
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
	row := slices.IndexFunc(c.settings.Modes, func(m scenario.Mode) bool { return m.Strategy() == strategy.ZooKeeper })
	if row < 0 || len(c.zookeeper) > 0 {
		return bad
	}
	skip := func(why string) {
		c.skipped = append(c.skipped, scenario.Skipped{Mode: c.settings.Modes[row], Why: why})
		c.settings.Modes = slices.Delete(c.settings.Modes, row, row+1)
	}
	if len(c.targets) > 0 {
		if defaultModes {
			skip("the fleet's ensemble is not known here; --modes " + joinModes(scenario.Modes()) + " runs the row against it")
		}
		return bad
	}
	if _, _, missing := zkproc.Binaries(); missing == nil {
		c.startZK = true
		return bad
	}
	if defaultModes {
		skip("no ZooKeeper ensemble: `" + zkproc.InstallHint + "` (with a Java runtime) lets the load generator start one, or --zookeeper host:port,... names one")
		return bad
	}
	return append(bad, "modes: zookeeper needs --zookeeper host:port,... (no ZooKeeper server runs in process: "+
		zkproc.InstallHint+" lets the load generator start one)")
}
