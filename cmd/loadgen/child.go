package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/flashsale/flashsale/internal/fleet"
)

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
