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
// cancellation, so a buyer who hung up does not leave the lock held until
// its TTL runs out. An error is logged, not returned: by now the order is
// committed (or refused) and that is what the buyer must hear; answering
// "failed" for a committed order would be a lie, and a lock we could not
// delete expires by its TTL (Release stopped its watchdog). ErrNotHeld here
// means the lock expired inside the critical section: with a naive lock,
// that is the oversell the demo shows.
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

// letGo releases l after a sale of p that ended with err; or, when the
// sale is in doubt under a strategy without a fence, abandons it until
// its TTL runs out (dlock.Lock.Abandon): its COMMIT may still be on its
// way, and without a fence nothing makes the next holder wait for it, so
// the lock keeps the next holder (or the buyer's retry, for the dedupe
// lock) out for as long as the lease would have. That narrows the window
// of a late commit; it does not close it (see ErrInDoubt).
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

// lockersFor returns the lockers of strategy name. The dedupe lock uses the
// product lock's mode, except under the fencing strategies: a dedupe lock
// needs no fencing token (it guards no write; the database's check of who
// has bought is the guarantee), so it is a lua lock there, one Redis round
// trip, rather than a fenced one that would leave a counter key behind for
// every buyer, or an etcd one that would cost three consensus writes.
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

// productKey and dedupeKey name the two locks. Every Redis (and etcd) key
// of a product holds its id as a hash tag, "{id}": ids cannot contain
// braces, so the tag is exactly the id, and one product's keys (its locks,
// its fence counter, its stock and buyers in package redisstock) share one
// Redis Cluster slot. Each kind of key has its own namespace
// ("flashsale:lock:", "flashsale:dedupe:", …), so an id with ':' in it
// cannot name a key of another kind. And every lock key ends in '}' (the
// dedupe key wraps the user's id in braces too, after the tag), so it is
// never the key dlock keeps beside another lock key: its fence counter,
// ":fence", or its turns, ":turns" and ":next" (dlock.InTurns).
func productKey(product string) string { return "flashsale:lock:{" + product + "}" }

// ProductKey is the key of product's lock, for tools outside a shop that
// watch it (the load generator's restart fault). Safe for concurrent use.
func ProductKey(product string) string { return productKey(product) }

func dedupeKey(product, user string) string {
	return "flashsale:dedupe:{" + product + "}:{" + user + "}"
}
