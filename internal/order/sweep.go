package order

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// The sweep: every shop expires the pending orders past their deadline and
// puts their units back, on a timer started by the first ask and stopped by
// Close. Exactly once with no coordinator: the database's clock says what
// is due (life.Due), and each order is ended by a compare-and-set in the
// transaction that gives its units back (giveBack), so of two shops that
// find one order, one ends it and the other gives nothing; a shop killed
// mid-sweep rolls back, and the next sweep, of any shop, takes it again.
const (
	// DefaultSweepEvery is the pause between two sweeps of one shop
	// (Options.SweepEvery): an order goes back on sale within it of its
	// deadline, while a shop sweeps.
	DefaultSweepEvery = 200 * time.Millisecond
	// sweepBatch bounds the orders one sweep expires; the rest wait for
	// the next.
	sweepBatch = 256
	// sweepLooks bounds how many times one sweep looks again for due
	// orders, leaving out the products whose returns failed.
	sweepLooks = 4
)

// startSweep starts this shop's sweep if p has a pay window (runSweep).
func (s *Service) startSweep(p stock.Product) {
	if p.PayWithin > 0 {
		s.runSweep()
	}
}

// runSweep starts this shop's sweep unless one runs, or Options.SweepEvery
// says none: it runs until Close. Safe for concurrent use.
func (s *Service) runSweep() {
	if s.opts.SweepEvery < 0 || s.sweeping.Load() || s.stopping.Err() != nil {
		return
	}
	if s.sweeping.CompareAndSwap(false, true) {
		s.sweeps.Add(1)
		go s.sweep()
	}
}

// sweepIfPending starts the sweep if the database holds pending orders,
// or returns owed to Redis, already: a shop that starts after another
// died sweeps what it left, whether or not a buyer asks it about their
// product.
func (s *Service) sweepIfPending() {
	defer s.sweeps.Done()
	ctx, cancel := context.WithTimeout(s.stopping, orderdb.ReleaseTimeout)
	defer cancel()
	var n int64
	err := s.db.WithContext(ctx).Raw(`SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM orders WHERE state = 'pending' LIMIT 1) AS one)
		+ (SELECT COUNT(*) FROM (SELECT 1 FROM redis_owed LIMIT 1) AS owed)`).
		Row().Scan(&n)
	if err == nil && n > 0 {
		s.runSweep()
	}
}

// sweep runs Sweep every Options.SweepEvery until Close, in one goroutine per
// Service at most.
func (s *Service) sweep() {
	defer s.sweeps.Done()
	t := time.NewTicker(s.opts.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stopping.Done():
			return
		case <-t.C:
		}
		if _, err := s.Sweep(s.stopping); err != nil && s.stopping.Err() == nil {
			s.opts.Logger.DebugContext(s.stopping, "sweep unpaid orders; the next one retries", "err", err)
		}
	}
}

// Sweep expires, once, up to sweepBatch pending orders past their deadline
// by the database's clock and gives their units back, each product's in one
// transaction (giveBack). It returns how many this call expired. Any number
// of calls, in any number of shops, may run at once. Errors: the first
// product's that failed (the others are swept all the same), or the database's.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	if s.opts.NaiveExpiry {
		return s.sweepNaive(ctx)
	}
	expired, first := 0, error(nil)
	// A product whose returns fail is left out of the next look, so that its
	// due orders never fill every batch and starve the others'.
	var failed []string
	for range sweepLooks {
		due, err := life.Due(ctx, s.db, sweepBatch, failed...)
		if err != nil {
			return expired, err
		}
		byProduct := map[string][]string{}
		var products []string
		for _, o := range due {
			if byProduct[o.ProductID] == nil {
				products = append(products, o.ProductID)
			}
			byProduct[o.ProductID] = append(byProduct[o.ProductID], o.ID)
		}
		n := len(failed)
		for _, id := range products {
			got, err := s.expire(ctx, id, byProduct[id])
			expired += got
			if err != nil {
				failed = append(failed, id)
				if first == nil {
					first = err
				}
			}
		}
		if len(failed) == n {
			break // every product it found was swept: the rest wait for the next sweep
		}
	}
	// The returns a shop committed and did not live to give Redis.
	if _, err := s.sweepOwed(ctx); err != nil && first == nil {
		first = err
	}
	return expired, first
}

// expire expires the orders ids of product, those of them that are still
// pending and due, and gives their units back, in one transaction.
func (s *Service) expire(ctx context.Context, product string, ids []string) (int, error) {
	p, err := s.product(ctx, product)
	if err != nil {
		return 0, err
	}
	var ended []life.Order
	err = s.giveBack(ctx, p, func(tx *gorm.DB) error {
		ended = ended[:0] // commit may run this again after a deadlock
		for _, id := range ids {
			o, ok, err := life.End(tx, id, life.Expired)
			if errors.Is(err, life.ErrAlreadyPaid) {
				continue // paid since Due read it, before its deadline
			}
			if err != nil {
				return err
			}
			if !ok {
				continue // another shop's sweep, or a cancel, came first
			}
			if err := s.give(tx, p, o); err != nil {
				return err
			}
			ended = append(ended, o)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.payRedis(ctx, p, ended)
	for _, o := range ended {
		s.ended(p, o, EventExpired)
	}
	return len(ended), nil
}
