package fleet

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestMain lets this test binary be a process fleet's child shop: the
// process fleet's tests start their shops by re-executing it.
func TestMain(m *testing.M) {
	if IsChildShop() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := ServeChildShop(ctx, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
