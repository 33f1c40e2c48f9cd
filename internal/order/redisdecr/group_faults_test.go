package redisdecr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Faults in redis-decr's group commit (group.go).

type placed struct {
	user string
	o    orderdb.Order
	err  error
}

// queueBuyers parks a busy writer for p, starts n buyers (Place) with
// ctxs from mk, and waits until all n are queued for a group.
func queueBuyers(t *testing.T, s *shop, p stock.Product, prefix string, n int, mk func(i int) context.Context) (*writeGroup, chan placed) {
	t.Helper()
	g := &writeGroup{writing: true}
	s.groups.Store(p.ID, g)
	out := make(chan placed, n)
	for i := range n {
		u := fmt.Sprint(prefix, i)
		go func() {
			o := newOrder(p, u)
			out <- placed{u, o, s.Place(mk(i), p, o)}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		k := len(g.waiting)
		g.mu.Unlock()
		if k == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d buyers queued", k, n)
		}
		time.Sleep(time.Millisecond)
	}
	return g, out
}

func startWriter(s *shop, p stock.Product, g *writeGroup) {
	s.writers.Add(1)
	go s.writeGroups(p, g)
}

// TestGroupCommitLostAnswer: a group of 5 whose COMMIT lands and whose
// answer is lost: each buyer asks the database after its own, and every
// one is told its order.
func TestGroupCommitLostAnswer(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, fault := b.DB.OpenPool(t)
		s := newShop(t, b, db, Options{})
		p := addProduct(ctx, t, b, db, "group-lost", stock.Product{Stock: 10})
		g, out := queueBuyers(t, s, p, "lost-", 5, func(int) context.Context { return ctx })
		fault.LoseNextAnswer(false)
		startWriter(s, p, g)
		for range 5 {
			r := <-out
			if r.err != nil {
				t.Errorf("%s: %v, want its order (the COMMIT landed)", r.user, r.err)
			}
		}
		if fault.Lost() != 1 {
			t.Fatalf("setup: %d answers lost", fault.Lost())
		}
		checkExact(ctx, t, b, db, p, 5)
	})
}

// TestGroupCommitSweptBetweenInsertAndUpdate: a sweep that reclaims one
// order of a group commits between the group's INSERT and its UPDATE
// (MySQL: the INSERT does not hold the product row). The group is refused
// and written order by order: the reclaimed buyer is told unavailable, the
// others get their orders, and the audit is exact.
func TestGroupCommitSweptBetweenInsertAndUpdate(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.DB.DB().Dialector.Name() != "mysql" {
			t.Skip("SQLite: one writer")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, _ := b.DB.OpenPool(t)
		s := newShop(t, b, db, Options{})
		p := addProduct(ctx, t, b, db, "group-swept-mid", stock.Product{Stock: 5})
		var victim atomic.Pointer[orderdb.Order]
		swept := make(chan error, 1)
		err := db.Callback().Raw().Before("gorm:raw").Register("test:sweep", func(tx *gorm.DB) {
			if !strings.Contains(tx.Statement.SQL.String(), "reclaims = ?") {
				return
			}
			v := victim.Swap(nil)
			if v == nil {
				return
			}
			open := []redisstock.Reservation{{Product: p.ID, Buyer: v.UserID, ID: v.ID, Quantity: 1}}
			swept <- b.DB.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				_, _, err := reclaimIn(tx, p.ID, open)
				return err
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		g, out := queueBuyers(t, s, p, "sw-", 3, func(int) context.Context { return ctx })
		g.mu.Lock()
		v := g.waiting[1].o
		g.mu.Unlock()
		victim.Store(&v)
		startWriter(s, p, g)
		if err := <-swept; err != nil {
			t.Fatal(err)
		}
		for range 3 {
			r := <-out
			switch {
			case r.user == v.UserID && !errors.Is(r.err, stock.ErrUnavailable):
				t.Errorf("%s, reclaimed: got %v, want stock.ErrUnavailable", r.user, r.err)
			case r.user != v.UserID && r.err != nil:
				t.Errorf("%s: %v", r.user, r.err)
			}
		}
		checkExact(ctx, t, b, db, p, 2)
	})
}
