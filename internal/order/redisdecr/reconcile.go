package redisdecr

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/stock"
)

// The reconciler: every sweepEvery, each shop repairs the redis-decr
// products it sells, in two steps that any number of shops may run at
// once: it lowers Redis's stock to the database's (Redis forgot writes,
// a failover), never raising it, and only if no return came in since the
// database was read (the returns counter: redisstock.Stock.Lower); and it
// gives back the reservations a dead shop left (reclaim.go). Why each is
// safe: docs/redis-decr.md.
const (
	// sweepEvery is the pause between two sweeps of one shop.
	sweepEvery = time.Second
	// sweepFor is how long after this shop was last asked for a product it
	// keeps sweeping it: long enough for a failover still under way when
	// the last buyer left (a promotion takes a few seconds), then a sweep.
	// A product whose ledger still holds reservations is swept longer,
	// until they are settled.
	sweepFor = 10 * time.Second
	// sweepTurn is how long a shop's turn to settle a product's ledger
	// lasts (redisstock.Stock.Turn): one sweep's worth, a little shorter than
	// sweepEvery, so that a shop alone is never out of turn at its next
	// sweep by a few milliseconds.
	sweepTurn = sweepEvery * 9 / 10
	// sweepStuck is how long past its hold a reservation waits for the
	// shop whose turn it is: the turns settle it within two sweepEvery
	// (a turn taken just before it fell due, then the next). Past that,
	// every shop that sweeps the product settles it, turn or not, as all
	// did before there were turns: a shop that takes every turn and
	// fails every time holds nobody up for longer.
	sweepStuck = 2 * sweepEvery
)

// KeepSweeping keeps redis-decr product p (and its buckets) swept for
// sweepFor from now, this shop having been asked to sell it, and starts
// the sweep if none runs. The shop calls it for every order of such a
// product, sold out or not (package order's Service does, before it
// answers sold out from what it has seen). Safe for concurrent use.
func (s *Seller) KeepSweeping(p stock.Product) {
	s.know(p)
	s.sweepUntil(p.ID, time.Now().Add(sweepFor))
	if s.sweeping.Load() || s.stopping.Err() != nil {
		return
	}
	if s.sweeping.CompareAndSwap(false, true) {
		s.sweeps.Add(1)
		go s.sweep()
	}
}

// sweepUntil makes sure product is swept until at least t.
func (s *Seller) sweepUntil(product string, t time.Time) {
	v, ok := s.sweepTill.Load(product)
	if !ok {
		v, _ = s.sweepTill.LoadOrStore(product, new(atomic.Int64))
	}
	till, n := v.(*atomic.Int64), t.UnixNano()
	for {
		old := till.Load()
		if old >= n || till.CompareAndSwap(old, n) {
			return
		}
	}
}

// sweep reconciles the products to sweep every sweepEvery, until there
// are none, or Close. It runs in one goroutine per Seller at most.
func (s *Seller) sweep() {
	defer s.sweeps.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stopping.Done():
			return
		case <-t.C:
		}
		products := s.toSweep()
		if len(products) == 0 {
			// Stop, then look once more: a KeepSweeping that saw this sweep
			// running (and so started none) is in sweepTill by now.
			s.sweeping.Store(false)
			if len(s.toSweep()) == 0 || !s.sweeping.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		for _, p := range products {
			if s.reconcile(s.stopping, p) {
				// Reservations are left to settle: sweep it next time too.
				s.sweepUntil(p, time.Now().Add(2*sweepEvery))
			}
		}
	}
}

// toSweep returns the redis-decr products this shop sweeps now: asked for
// within sweepFor, or with reservations left at their last sweep.
func (s *Seller) toSweep() []string {
	now := time.Now().UnixNano()
	var out []string
	s.sweepTill.Range(func(k, v any) bool {
		if v.(*atomic.Int64).Load() >= now {
			out = append(out, k.(string))
		}
		return true
	})
	return out
}

// reconcile repairs, within one sweepEvery, what any shop may repair of
// product's Redis state at any time, and reports whether product's ledger
// still holds reservations (or could not be read):
//
//  1. Redis's stock comes down to the database's (lowerToDatabase);
//  2. the reservations past their hold are settled: the sold ones leave
//     the ledger, the rest are given back (reclaim), by one shop of the
//     fleet per sweepEvery (the one whose turn it is); a bucketed
//     product's bucket by bucket, each with its own ledger and turn.
//
// A failure waits for the next sweep; Redis down or the database down is
// what the orders themselves report.
func (s *Seller) reconcile(ctx context.Context, product string) (pending bool) {
	ctx, cancel := context.WithTimeout(ctx, sweepEvery)
	defer cancel()
	// 1. Lower Redis's stock to the database's.
	if err := s.lowerToDatabase(ctx, product); err != nil && !errors.Is(err, stock.ErrNotLoaded) {
		s.opts.Logger.DebugContext(ctx, "reconcile: lower the redis stock to the database's", "product", product, "err", err)
	}
	// 2. Give back the reservations nobody will finish, ledger by ledger.
	for _, name := range s.namesOf(product) {
		if s.settleLedger(ctx, product, name) {
			pending = true
		}
	}
	return pending
}

// settleLedger is reconcile's second step for the ledger kept under name
// (product's, or one of its buckets'): it gives back the reservations
// nobody will finish, in this shop's turn: every shop finds the same ones
// due (redisstock.Stock.Turn). Out of turn, it keeps sweeping while the
// ledger holds any, in case the shop whose turn it is dies; and it
// settles them all the same once one is stuck, in case that shop lives
// and cannot settle (its database is gone) yet asks first every round.
// It reports whether the ledger still holds reservations.
func (s *Seller) settleLedger(ctx context.Context, product, name string) (pending bool) {
	mine, held, stuck, err := s.res.Turn(ctx, name, sweepTurn, sweepStuck)
	if err == nil && !mine && !stuck {
		return held > 0
	}
	pending, err = s.reclaim(ctx, product, name)
	if err != nil {
		s.opts.Logger.DebugContext(ctx, "reconcile: reclaim the reservations past their hold", "product", product, "ledger", name, "err", err)
	}
	return pending
}
