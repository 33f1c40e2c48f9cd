package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/porthold"
)

// TestShopWithoutAZooKeeperSession: a shop named an ensemble that grants
// no session (nothing listens there) refuses to start, within its
// context, with an error that names --zookeeper and wraps
// dlock.ErrUnavailable.
func TestShopWithoutAZooKeeperSession(t *testing.T) {
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	nobody := fmt.Sprintf("127.0.0.1:%d", free[0]) // the port is free: nothing answers there
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		b := backendsOf(env)
		b.ZooKeeper = []string{nobody}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		shop, err := app.NewShop(ctx, app.Config{Logger: quiet, AdminToken: testToken}, b)
		if err == nil {
			shop.Close()
			t.Fatal("NewShop with no ensemble: got a shop, want an error")
		}
		if !errors.Is(err, dlock.ErrUnavailable) || !strings.Contains(err.Error(), "--zookeeper") {
			t.Errorf("NewShop with no ensemble: got %v, want an error naming --zookeeper wrapping %v", err, dlock.ErrUnavailable)
		}
	})
}
