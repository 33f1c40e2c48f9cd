package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/flashsale/flashsale/internal/fleet"
)

// crashUsage is --crash's line in --help.
const crashUsage = "SIGKILL a shop process N times in each attack, at 1/(N+1), 2/(N+1)... of it, rotating over the shops, and start it again on its port at once (back once its /readyz answers); the shops then run as child processes, this binary re-executed, their output in shop-<n>.log in the report folder; clicks sent to a dead shop count as errors; not with --targets (default 0: shops in process, none killed)"

// checkCrash validates --crash against the rest of the command line
// (Settings.Problems checks its range and the other faults).
func (c *config) checkCrash() []string {
	if c.settings.Crash > 0 && len(c.targets) > 0 {
		return []string{"crash: not with --targets: the load generator kills only shop processes it started (drop --targets)"}
	}
	return nil
}

// serveIfChildShop serves a shop and exits, if this process is one of a
// --crash run's child shops (fleet.IsChildShop); otherwise it returns.
func serveIfChildShop() {
	if !fleet.IsChildShop() {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := fleet.ServeChildShop(ctx, os.Stderr)
	stop()
	os.Exit(code)
}
