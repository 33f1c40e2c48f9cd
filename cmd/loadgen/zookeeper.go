package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/zkproc"
	"github.com/flashsale/flashsale/internal/strategy"
)

// checkZooKeeper checks --zookeeper (given as raw): members that are
// host:port, only without --targets. Without it, the zookeeper row runs
// on an ensemble the load generator starts (zkproc) where java and
// Debian's zookeeper are installed. Where they are not, the default rows
// (defaultModes) show it as skipped, with the command that enables it,
// and a --strategies that names it is an error. Against --targets the default
// rows run it if the fleet's shops have an ensemble, which
// skipWithoutEnsemble asks their /readyz once the run starts (probeZK),
// and --strategies that names it runs it there whatever they say.
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
	row := slices.IndexFunc(c.settings.Strategies, func(m scenario.Strategy) bool { return m.Name() == strategy.ZooKeeper })
	if row < 0 || len(c.zookeeper) > 0 {
		return bad
	}
	skip := func(why string) {
		c.skipped = append(c.skipped, scenario.Skipped{Strategy: c.settings.Strategies[row], Why: why})
		c.settings.Strategies = slices.Delete(c.settings.Strategies, row, row+1)
	}
	if len(c.targets) > 0 {
		c.probeZK = defaultModes
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
	return append(bad, "strategies: zookeeper needs --zookeeper host:port,... (no ZooKeeper server runs in process: "+
		zkproc.InstallHint+" lets the load generator start one)")
}

// skipWithoutEnsemble is the --targets half of checkZooKeeper: when
// c.probeZK, it asks the first shop's /readyz whether the fleet locks on
// a ZooKeeper ensemble, and if it does not, or does not say, moves the
// zookeeper row from c's strategies to its skipped rows.
func skipWithoutEnsemble(ctx context.Context, c *config, shop string) {
	if !c.probeZK || hasEnsemble(ctx, shop) {
		return
	}
	row := slices.IndexFunc(c.settings.Strategies, func(m scenario.Strategy) bool { return m.Name() == strategy.ZooKeeper })
	if row < 0 {
		return
	}
	c.skipped = append(c.skipped, scenario.Skipped{Strategy: c.settings.Strategies[row],
		Why: "the fleet's shops name no ZooKeeper ensemble (" + shop + "/readyz); start them with --zookeeper host:port,..."})
	c.settings.Strategies = slices.Delete(c.settings.Strategies, row, row+1)
}

// hasEnsemble reports whether the shop's /readyz says it locks on a
// ZooKeeper ensemble ("zookeeper": "quorum"); false if it cannot tell.
func hasEnsemble(ctx context.Context, shop string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(shop, "/")+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var ready map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&ready); err != nil {
		return false
	}
	_, ok := ready["zookeeper"]
	return ok
}
