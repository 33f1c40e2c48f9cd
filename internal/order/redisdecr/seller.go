// Package redisdecr is strategy redis-decr, the way most production flash
// sales sell a hot product: no lock; the stock lives in Redis as well, and
// one script per order (package redisstock) answers sold out, duplicate
// buyer, or reserved, in one round trip. Only reserved buyers reach the
// database; if the write fails, the reservation is given back. The script
// checks the buyer before it decrements, never after, so a repeated click
// takes no unit; the database keeps its own guards (the unique key, the
// conditional UPDATE). Package order's Service sells through a Seller.
//
// The files, in the order an order meets them: place.go (reserve, write,
// give back); redisstock/ (the Redis side, one Lua script per step, shared
// with redis-queue); buckets.go (over stock buckets); group.go (the write,
// grouped with other buyers'); reclaim.go (one order's write, and the sweep
// that gives a dead shop's reservations back); settle.go (a write in doubt,
// settled in the background); reconcile.go (every shop's sweep back to the
// database's stock).
package redisdecr

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Options are what a Seller needs of the shop (package order's Service)
// it sells for. Stock and Writer are required; a nil func does nothing.
// The funcs are called concurrently and must return at once (Work
// excepted).
type Options struct {
	// Stock is where the reservations are kept, in Redis.
	Stock *redisstock.Stock
	// Writer writes the orders to the database.
	Writer *orderdb.Writer
	// Work is the business work of one order of p: it ends early, with
	// ctx's error, if ctx ends.
	Work func(ctx context.Context, p stock.Product) error
	// SoldOut hears that the database has no unit of product left.
	SoldOut func(product string)
	// GivenBack hears of each reservation given back because its order
	// could not be written, and Reclaimed of each one the sweep gave back
	// because its hold ran out with no order written (reclaim.go).
	GivenBack, Reclaimed func(product string)
	// Grouped hears of each group commit, with how many orders it wrote
	// (group.go).
	Grouped func(orders int)
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Seller sells redis-decr products for one shop process; several Sellers
// (shops) may share a database and Redis. It is safe for concurrent use.
// Close it when done: it settles and sweeps in the background.
type Seller struct {
	opts Options
	res  *redisstock.Stock
	w    *orderdb.Writer
	db   *gorm.DB // w's

	buckets sync.Map       // product id -> its stock buckets' names, if 2 or more; see know
	groups  sync.Map       // product id -> *writeGroup; see writeGrouped
	writers sync.WaitGroup // writeGroups' goroutines

	sweepTill    sync.Map // product id -> *atomic.Int64, sweep it until then (Unix ns); see KeepSweeping
	sweeping     atomic.Bool
	sweeps       sync.WaitGroup // sweep's goroutine
	reclaimGrace time.Duration  // see hold
	reclaims     sync.Map       // product id -> *atomic.Int64, its reclaims as last read; see reclaimsSeen

	// afterRead runs between lowerToDatabase's database read and its
	// Lower: a no-op, and a test's hook to put a return in between.
	afterRead func(product string)

	settling sync.WaitGroup  // settle's goroutines
	stopping context.Context // ended by Close: settle and sweep stop
	stop     context.CancelFunc
}

// New returns a Seller as opts say. It starts nothing until its first
// order (Place) or KeepSweeping.
func New(opts Options) *Seller {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Work == nil {
		opts.Work = func(context.Context, stock.Product) error { return nil }
	}
	for _, f := range []*func(string){&opts.SoldOut, &opts.GivenBack, &opts.Reclaimed} {
		if *f == nil {
			*f = func(string) {}
		}
	}
	if opts.Grouped == nil {
		opts.Grouped = func(int) {}
	}
	s := &Seller{opts: opts, res: opts.Stock, w: opts.Writer, db: opts.Writer.DB(), reclaimGrace: reclaimGrace,
		afterRead: func(string) {}}
	s.stopping, s.stop = context.WithCancel(context.Background())
	return s
}

// closeWait is how long Close lets the settlements under way finish.
const closeWait = 5 * time.Second

// Close lets the settlements under way (settle) finish for at most
// closeWait (one cut short leaves its reservation in Redis), then stops
// them, the sweep and the group writers, and waits for them: call it after
// the last Place returned, before closing the database and Redis clients.
// Calling it again does nothing more.
func (s *Seller) Close() {
	done := make(chan struct{})
	go func() {
		s.settling.Wait()
		close(done)
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	s.stop()
	<-done
	s.sweeps.Wait()
	s.writers.Wait()
}

// Return puts the units of order o of p, ended unpaid and given back to the
// database already, back in the Redis stock they came from, once; its buyer
// may reserve again. It reports whether this call returned them. Errors:
// stock.ErrUnavailable (the return may have run: call again).
func (s *Seller) Return(ctx context.Context, p stock.Product, o orderdb.Order) (bool, error) {
	s.know(p)
	name := s.nameOf(o)
	return s.res.Return(ctx, name, redisstock.BuyersKey(name), o.UserID, o.ID, o.Quantity)
}
