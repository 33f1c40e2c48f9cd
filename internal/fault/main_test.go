package fault

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/flashsale/flashsale/internal/fleet"
)

// TestMain lets this test binary be a process fleet's child shop: the
// crash's tests start their shops by re-executing it (fleet.IsChildShop).
func TestMain(m *testing.M) {
	if fleet.IsChildShop() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := fleet.ServeChildShop(ctx, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
