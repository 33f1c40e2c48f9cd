package order

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestEtcdFenceSurvivesARebuiltCluster: an etcd cluster rebuilt empty
// counts its revisions from 1 again. Its holders must sell at once all the
// same (the database has seen much higher revisions, of the old cluster:
// its epoch is later), and a holder of the old cluster that did not notice
// must still be refused. Each cluster here is an embedded one of its own,
// on either database: the shared real cluster cannot be rebuilt.
func TestEtcdFenceSurvivesARebuiltCluster(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		db := b.DB.DB()
		p, err := stock.NewStore(db).Create(ctx, stock.Product{ID: b.Redis.Key("rebuilt"),
			Strategy: strategy.Etcd, Stock: 100, LockTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		place := func(s *Service, n int, who string) (ok int, last error) {
			for i := range n {
				_, err := s.Place(ctx, Request{UserID: who + strconv.Itoa(i), ProductID: p.ID, Quantity: 1})
				if err != nil {
					last = err
					continue
				}
				ok++
			}
			return ok, last
		}

		// The old cluster sells, and its revisions climb.
		old, oldShop := etcdShop(t, b)
		if ok, err := place(oldShop, 20, "old"); ok != 20 {
			t.Fatalf("old cluster: %d of 20 sold (last error %v)", ok, err)
		}
		stale, err := etcdlock.New(old.client).Lock(ctx, productKey(p.ID), time.Second, time.Second)
		if err != nil {
			t.Fatal(err)
		}

		// The cluster is replaced by an empty one (the holder keeps its
		// handle, epoch and fence).
		old.client.Close()
		old.cluster.Close()
		_, newShop := etcdShop(t, b)
		if ok, err := place(newShop, 20, "new"); ok != 20 {
			t.Fatalf("rebuilt cluster: %d of 20 sold (last error %v), want every order", ok, err)
		}

		// The old cluster's holder wakes up, unaware.
		_, err = newShop.buy(ctx, stale, p, Request{UserID: "stale", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, ErrFencedOut) {
			t.Errorf("the old cluster's holder (epoch %d, fence %d): got %v, want %v",
				stale.Epoch(), stale.Fence(), err, ErrFencedOut)
		}
		a, err := newShop.Audit(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Orders != 40 || a.Stock != 60 || !a.Consistent {
			t.Errorf("audit: %d orders, stock %d, consistent %v; want 40, 60, true", a.Orders, a.Stock, a.Consistent)
		}
	})
}

// etcdCluster is an embedded etcd cluster of one member and a client to it.
type etcdCluster struct {
	cluster *embedded.Etcd
	client  *clientv3.Client
}

// etcdShop starts an embedded etcd cluster and a Service on b's database
// that locks on it.
func etcdShop(t *testing.T, b *testenv.Env) (etcdCluster, *Service) {
	t.Helper()
	cluster, err := embedded.StartEtcd(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	client, err := clientv3.New(clientv3.Config{Endpoints: cluster.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	lua, err := dlock.New(dlock.ModeLua, b.Redis.Clients())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lua.Close() })
	lockers := map[dlock.Mode]dlock.Locker{dlock.ModeLua: lua, etcdlock.Mode: etcdlock.New(client)}
	s := NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), lockers, Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { s.Close() })
	return etcdCluster{cluster: cluster, client: client}, s
}
