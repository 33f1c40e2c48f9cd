package fault

import (
	"os"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/fleet"
)

// TestMain lets this test binary be a process fleet's child shop: the
// tests that start a process fleet re-execute it as their shops.
func TestMain(m *testing.M) {
	fleet.ServeIfChildShop()
	os.Exit(m.Run())
}
