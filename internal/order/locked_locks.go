package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// release lets go of l on a context that survives the caller's
// cancellation, so a buyer who hung up does not leave it held. Errors are
// logged, not returned: the order is committed or refused by now, and a
// lock not deleted expires by its TTL. ErrNotHeld here means it expired in
// the critical section: with naive, the oversell the demo shows.
func (s *Service) release(ctx context.Context, l *dlock.Lock) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orderdb.ReleaseTimeout)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		s.opts.Logger.WarnContext(ctx, "release lock", "key", l.Key(), "err", err)
	}
}

// lockProduct takes p's product lock with locker on ctx, waiting at most
// the lock wait, and tells the observer how the ask went.
func (s *Service) lockProduct(ctx context.Context, locker dlock.Locker, p stock.Product) (*dlock.Lock, error) {
	start := time.Now()
	lock, err := locker.Lock(ctx, productKey(p.ID), p.LockTTL, s.opts.LockWait)
	if err != nil {
		err = fromLock(err, "product lock")
		s.opts.Observer.LockWaited(p.Strategy, outcomeFor(ctx, err), time.Since(start))
		return nil, err
	}
	s.opts.Observer.LockWaited(p.Strategy, "acquired", time.Since(start))
	return lock, nil
}

// releaseProduct lets go of p's product lock, taken at got, after a sale
// that ended with err (letGo), and tells how long it was held (held).
// Off's lock holds nothing: its hot row's hold is told instead (sell).
func (s *Service) releaseProduct(ctx context.Context, p stock.Product, lock *dlock.Lock, got time.Time, err error) {
	s.letGo(ctx, p, lock, err)
	if p.Strategy != strategy.Off {
		s.held(p, time.Since(got))
	}
}

// letGo releases l after a sale of p that ended with err; a sale in doubt
// without a fence abandons l to its TTL instead (dlock.Lock.Abandon): its
// COMMIT may still land, and the lock keeps the next holder out meanwhile.
// That narrows a late commit's window; it does not close it (ErrInDoubt).
func (s *Service) letGo(ctx context.Context, p stock.Product, l *dlock.Lock, err error) {
	if errors.Is(err, ErrInDoubt) && !p.Strategy.Fences() {
		l.Abandon()
		return
	}
	s.release(ctx, l)
}

// lockPair is what a locking strategy locks with: the product lock, and
// the buyer's dedupe lock.
type lockPair struct {
	product, dedupe dlock.Locker
}

// lockersFor returns the lockers of strategy name. The dedupe lock takes
// the product lock's mode, but lua under the fencing strategies: it guards
// no write, so a token would only cost a counter key per buyer (fenced) or
// three consensus writes (etcd).
func (s *Service) lockersFor(name strategy.Name) (lockPair, error) {
	mode, ok := name.LockMode()
	if !ok {
		return lockPair{}, fmt.Errorf("order: strategy %q takes no lock", name)
	}
	dedupeMode := mode
	if name.Fences() {
		dedupeMode = dlock.ModeLua
	}
	product, err := s.locker(mode)
	if err != nil {
		return lockPair{}, err
	}
	dedupe, err := s.locker(dedupeMode)
	if err != nil {
		return lockPair{}, err
	}
	return lockPair{product: product, dedupe: dedupe}, nil
}

// locker returns the Locker for mode, or ErrUnavailable if this shop
// has none: a shop started without the service (its --zookeeper, say)
// answers the strategy's orders with a 503 that says so.
func (s *Service) locker(mode dlock.Mode) (dlock.Locker, error) {
	l, ok := s.lockers[mode]
	if !ok || l == nil {
		return nil, fmt.Errorf("%w: this shop has no lock service for %q (the shop's flags name its servers)", ErrUnavailable, mode)
	}
	return l, nil
}

// productKey and dedupeKey name the two locks. Every key of a product holds
// its id as a hash tag, "{id}" (ids have no braces), so one product's keys
// share one Redis Cluster slot; each kind has its own namespace, so an id
// with ':' cannot name another kind's key; and every lock key ends in '}',
// so it is never a key dlock keeps beside a lock (":fence", ":turns", ":next").
func productKey(product string) string { return "flashsale:lock:{" + product + "}" }

// ProductKey is the key of product's lock, for tools outside a shop that
// watch it (the load generator's restart fault). Safe for concurrent use.
func ProductKey(product string) string { return productKey(product) }

func dedupeKey(product, user string) string {
	return "flashsale:dedupe:{" + product + "}:{" + user + "}"
}
