package fleet

import (
	"os"
	"testing"
)

// TestMain lets this test binary be a process fleet's child shop: the
// tests that start a process fleet re-execute it as their shops.
func TestMain(m *testing.M) {
	ServeIfChildShop()
	os.Exit(m.Run())
}
