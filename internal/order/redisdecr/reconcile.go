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
	// keeps sweeping it: past a failover under way when the last buyer left.
	// A product whose ledger holds reservations is swept until they settle.
	sweepFor = 10 * time.Second
	// sweepTurn is how long a shop's turn to settle a product's ledger lasts
	// (redisstock.Stock.Turn): a little under sweepEvery, so a shop alone
	// never finds itself out of turn by a few milliseconds.
	sweepTurn = sweepEvery * 9 / 10
	// sweepStuck is how long past its hold a reservation waits for the shop
	// whose turn it is; past that, every shop sweeping the product settles it,
	// so a shop that takes every turn and fails holds nobody up for longer.
	sweepStuck = 2 * sweepEvery
)

// KeepSweeping keeps redis-decr product p (and its buckets) swept for
// sweepFor from now and starts the sweep if none runs. The shop calls it
// for every order of such a product, sold out or not. Safe for concurrent use.
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
// product's Redis state: its stock comes down to the database's
// (lowerToDatabase), and, in this shop's turn, the reservations past their
// hold are settled, ledger by ledger (settleLedger). It reports whether a
// ledger still holds reservations (or could not be read); a failure waits
// for the next sweep.
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

// settleLedger is reconcile's second step for the ledger under name: it
// settles the reservations nobody will finish (reclaim) in this shop's turn
// (redisstock.Stock.Turn), or out of turn once one is stuck, in case the
// shop whose turn it is cannot settle. It reports whether the ledger still
// holds reservations.
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
