package order

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/reserve"
)

// The reconciler: every shop brings Redis's stock of the redis-decr
// products it sells back down to the database's.
//
// Every unit the database sells was reserved in Redis first, so Redis
// offers at most what the database has, less the reservations on their
// way to it. That holds while Redis remembers every write. It breaks when
// Redis forgets some: a replica promoted without the newest reservations
// (a failover), or a lowering sent to a master that died before its
// replica heard of it. Then Redis offers phantom units. (A give-back lost
// the same way does the opposite: Redis keeps a unit for a reservation
// that no longer exists, which a sweep that only lowers cannot return; the
// audit's drift shows it, below zero.) The
// database refuses them, and the refusal lowers Redis (placeReserved);
// but once the sale has sold out nobody asks Redis again, and the drift
// would stay for good.
//
// So each shop sweeps: every sweepEvery, for each redis-decr product it
// was asked to sell within the last sweepFor, it reads the database's
// stock and lowers Redis's to it (reconcile). That is one SELECT and one
// script per product and sweep. A shop with no such product runs no sweep.
//
// Lowering to a database read is safe with reservations in flight. Stock
// never goes up in the database, and each unit it sells was reserved in
// Redis before, so the true Redis stock is the database's stock now less
// the reservations in flight, and the value read a moment ago is at least
// the stock now: the sweep can leave Redis above the true value, never
// below it. What it leaves above (a reservation given back right after
// the read) the next sweep lowers. And Lower only ever lowers, so sweeps
// by several shops, and the order flow's own lowering, commute: any of
// them may run at any time, any number of times.
const (
	// sweepEvery is the pause between two sweeps of one shop.
	sweepEvery = time.Second
	// sweepFor is how long after this shop was last asked for a product it
	// keeps sweeping it: long enough for a failover still under way when
	// the last buyer left (a promotion takes a few seconds), then a sweep.
	sweepFor = 10 * time.Second
)

// touch records that this shop was asked to sell redis-decr product now,
// and starts the sweep if none runs. Place calls it for every order of such
// a product, sold out or not.
func (s *Service) touch(product string) {
	v, ok := s.asked.Load(product)
	if !ok {
		v, _ = s.asked.LoadOrStore(product, new(atomic.Int64))
	}
	v.(*atomic.Int64).Store(time.Now().UnixNano())
	if s.sweeping.Load() || s.stopping.Err() != nil {
		return
	}
	if s.sweeping.CompareAndSwap(false, true) {
		s.sweeps.Add(1)
		go s.sweep()
	}
}

// sweep reconciles the recently asked products every sweepEvery, until
// there are none, or Close. It runs in one goroutine per Service at most.
func (s *Service) sweep() {
	defer s.sweeps.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stopping.Done():
			return
		case <-t.C:
		}
		products := s.recentlyAsked()
		if len(products) == 0 {
			// Stop, then look once more: a touch that still saw this sweep
			// running (and so started none) is in asked by now.
			s.sweeping.Store(false)
			if len(s.recentlyAsked()) == 0 || !s.sweeping.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		for _, p := range products {
			s.reconcile(s.stopping, p)
		}
	}
}

// recentlyAsked returns the redis-decr products this shop was asked for
// within sweepFor.
func (s *Service) recentlyAsked() []string {
	since := time.Now().Add(-sweepFor).UnixNano()
	var out []string
	s.asked.Range(func(k, v any) bool {
		if v.(*atomic.Int64).Load() >= since {
			out = append(out, k.(string))
		}
		return true
	})
	return out
}

// reconcile repairs, within one sweepEvery, what any shop may repair of
// product's Redis state at any time:
//
//  1. Redis's stock comes down to the database's (lowerToDatabase).
//
// A failure waits for the next sweep; Redis down or the database down is
// what the orders themselves report.
func (s *Service) reconcile(ctx context.Context, product string) {
	ctx, cancel := context.WithTimeout(ctx, sweepEvery)
	defer cancel()
	// 1. Lower Redis's stock to the database's.
	if err := s.lowerToDatabase(ctx, product); err != nil && !errors.Is(err, reserve.ErrNotLoaded) {
		s.opts.Logger.DebugContext(ctx, "reconcile: lower the redis stock to the database's", "product", product, "err", err)
	}
}
