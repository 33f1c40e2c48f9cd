package redisdecr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// TestGroupCommit: a group of redis-decr orders is written whole, its
// units taken in one UPDATE, or not at all; a group the database refuses
// for any one order (a buyer with an order Redis forgot, or a sweep since
// the oldest reservation) writes nothing and answers errWriteAlone, and
// each order written alone then gets its own answer.
func TestGroupCommit(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := b.DB.DB()
		s := newShop(t, b, db, Options{})
		group := func(p stock.Product, seen int64, buyers ...string) []*groupedWrite {
			var g []*groupedWrite
			for _, u := range buyers {
				g = append(g, &groupedWrite{o: newOrder(p, u), seen: seen, ctx: ctx})
			}
			return g
		}
		orders := func(t *testing.T, p stock.Product) int64 {
			t.Helper()
			var n int64
			if err := db.WithContext(ctx).Raw("SELECT COUNT(*) FROM orders WHERE product_id = ?", p.ID).Row().Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		t.Run("written whole", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "group-whole", stock.Product{Stock: 5})
			if err := s.commitGroup(p, group(p, 0, "a", "b", "c")); err != nil {
				t.Fatal(err)
			}
			if got, n := stockOf(ctx, t, db, p.ID), orders(t, p); got != 2 || n != 3 {
				t.Fatalf("after a group of 3 of 5 units: %d left, %d orders; want 2 and 3", got, n)
			}
		})
		t.Run("a buyer Redis forgot", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "group-forgot", stock.Product{Stock: 5})
			if err := s.commitGroup(p, group(p, 0, "a")); err != nil {
				t.Fatal(err)
			}
			g := group(p, 0, "b", "a", "c")
			if err := s.commitGroup(p, g); !errors.Is(err, errWriteAlone) {
				t.Fatalf("a group with a buyer who has an order: got %v, want %v", err, errWriteAlone)
			}
			if got, n := stockOf(ctx, t, db, p.ID), orders(t, p); got != 4 || n != 1 {
				t.Fatalf("after the refused group: %d left, %d orders; want 4 and 1", got, n)
			}
			if err := s.commitGroup(p, g[1:2]); !errors.Is(err, orderdb.ErrDuplicateKey) {
				t.Fatalf("the buyer who has an order, alone: got %v, want %v", err, orderdb.ErrDuplicateKey)
			}
		})
		t.Run("fewer units than the group", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "group-short", stock.Product{Stock: 2})
			if err := s.commitGroup(p, group(p, 0, "a", "b", "c")); !errors.Is(err, errWriteAlone) {
				t.Fatalf("a group of 3 for 2 units: got %v, want %v", err, errWriteAlone)
			}
			if got, n := stockOf(ctx, t, db, p.ID), orders(t, p); got != 2 || n != 0 {
				t.Fatalf("after the refused group: %d left, %d orders; want 2 and 0", got, n)
			}
		})
		t.Run("every buyer gone", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "group-gone", stock.Product{Stock: 5})
			gone, leave := context.WithCancel(ctx)
			leave()
			g := group(p, 0, "a", "b")
			g[0].ctx, g[1].ctx = gone, gone
			if err := s.commitGroup(p, g); err == nil {
				t.Fatal("a group whose buyers have all gone was written: want it rolled back")
			}
			if got, n := stockOf(ctx, t, db, p.ID), orders(t, p); got != 5 || n != 0 {
				t.Fatalf("after the group nobody waited for: %d left, %d orders; want 5 and 0", got, n)
			}
			g[1].ctx = ctx // one buyer still there
			if err := s.commitGroup(p, g); err != nil {
				t.Fatalf("a group with one buyer still there: %v", err)
			}
		})
		t.Run("a sweep since the oldest reservation", func(t *testing.T) {
			p := addProduct(ctx, t, b, db, "group-swept", stock.Product{Stock: 5})
			if err := db.WithContext(ctx).Exec("UPDATE products SET reclaims = reclaims + 1 WHERE id = ?", p.ID).Error; err != nil {
				t.Fatal(err)
			}
			g := append(group(p, 1, "a"), group(p, 0, "b")...) // b's was made before the sweep
			if err := s.commitGroup(p, g); !errors.Is(err, errWriteAlone) {
				t.Fatalf("a group with a reservation older than the sweep: got %v, want %v", err, errWriteAlone)
			}
			if err := s.commitGroup(p, g[:1]); err != nil {
				t.Fatalf("the reservation made after the sweep, alone: %v", err)
			}
		})
	})
}

// TestGroupCommitUnderACrowd: buyers arriving together share groups, and
// every order is written once: stock and orders add up, and no buyer waits
// on a write that never answers.
func TestGroupCommitUnderACrowd(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := b.DB.DB()
		s := newShop(t, b, db, Options{})
		p := addProduct(ctx, t, b, db, "group-crowd", stock.Product{Stock: 300})
		const buyers = 200
		var wg sync.WaitGroup
		errs := make(chan error, buyers)
		for i := range buyers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := newOrder(p, fmt.Sprint("crowd-", i))
				errs <- s.writeGrouped(ctx, p, o, 0)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("a buyer's write: %v", err)
			}
		}
		var n int64
		if err := db.WithContext(ctx).Raw("SELECT COUNT(*) FROM orders WHERE product_id = ?", p.ID).Row().Scan(&n); err != nil {
			t.Fatal(err)
		}
		left, err := orderdb.ReadStock(ctx, db, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n != buyers || left != 300-buyers {
			t.Fatalf("after %d buyers: %d orders, %d left; want %d and %d", buyers, n, left, buyers, 300-buyers)
		}
	})
}

// TestGroupCommitLeftEarly: a buyer whose context ends while its order
// waits for a group is answered errLeftEarly at once, and its order is not
// written by the group that follows.
func TestGroupCommitLeftEarly(t *testing.T) {
	s := &Seller{}
	p := stock.Product{ID: "left-early"}
	g := &writeGroup{writing: true} // a writer is busy: nobody takes the order
	s.groups.Store(p.ID, g)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.writeGrouped(ctx, p, orderdb.Order{ID: "o1", ProductID: p.ID}, 0)
	if !errors.Is(err, errLeftEarly) {
		t.Fatalf("a buyer gone before the write: got %v, want %v", err, errLeftEarly)
	}
	if next := g.next(); next != nil {
		t.Fatalf("the next group holds %d orders, want none: the buyer left", len(next))
	}
	if g.writing {
		t.Fatal("the writer did not stop with nobody waiting")
	}
}

// TestGroupCommitGroupsWhatWaits: the orders that arrive while the writer
// is busy are written together, in one group, when it comes back.
func TestGroupCommitGroupsWhatWaits(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := b.DB.DB()
		s := newShop(t, b, db, Options{})
		p := addProduct(ctx, t, b, db, "group-waits", stock.Product{Stock: 10})
		g := &writeGroup{writing: true} // the writer is busy
		s.groups.Store(p.ID, g)
		const buyers = 7
		errs := make(chan error, buyers)
		for i := range buyers {
			go func() {
				errs <- s.writeGrouped(ctx, p, newOrder(p, fmt.Sprint("waits-", i)), 0)
			}()
		}
		for waiting := 0; waiting < buyers; {
			g.mu.Lock()
			waiting = len(g.waiting)
			g.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		s.writers.Add(1)
		go s.writeGroups(p, g) // the writer comes back
		for range buyers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.grouped) != 1 || s.grouped[0] != buyers {
			t.Fatalf("group commits of %v, want one of %d", s.grouped, buyers)
		}
		if left, err := orderdb.ReadStock(ctx, db, p.ID); err != nil || left != 10-buyers {
			t.Fatalf("stock after the group: %d, %v; want %d", left, err, 10-buyers)
		}
	})
}
