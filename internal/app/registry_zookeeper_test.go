package app_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Shops on one database must name one ZooKeeper ensemble, as they must
// one etcd cluster: a shop with none beside a shop with one, or with a
// part of it, refuses to start and names --zookeeper; the same members in
// another order are the same ensemble.
func TestRegistryZooKeeper(t *testing.T) {
	servers := testenv.NewZooKeeper(t).Servers()
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		nodes := redisNodes(t)
		shop := func(zk []string) error {
			t.Helper()
			s, err := app.NewShop(t.Context(), app.Config{Logger: quiet}, &app.Backends{DB: secondPool(t, tdb), RedisAddrs: nodes, ZooKeeper: zk})
			if err == nil {
				t.Cleanup(func() { s.Close() })
			}
			return err
		}
		if err := shop(servers); err != nil {
			t.Fatalf("first shop: %v", err)
		}
		reversed := slices.Clone(servers)
		slices.Reverse(reversed)
		if err := shop(reversed); err != nil {
			t.Errorf("second shop, the members in another order: %v", err)
		}
		for name, zk := range map[string][]string{"no ensemble": nil, "a part of it": servers[:1]} {
			err := shop(zk)
			if !errors.Is(err, app.ErrOtherLockServers) || !strings.Contains(err.Error(), "the same --zookeeper (") {
				t.Errorf("%s: got %v, want ErrOtherLockServers naming --zookeeper", name, err)
			}
		}
	})
}
