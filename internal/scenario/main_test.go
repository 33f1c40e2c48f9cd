package scenario_test

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/flashsale/flashsale/internal/scenario"
)

// TestMain lets this test binary be a process fleet's child shop: the
// --crash tests start their shops by re-executing it (scenario.IsChildShop).
func TestMain(m *testing.M) {
	if scenario.IsChildShop() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := scenario.ServeChildShop(ctx, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
