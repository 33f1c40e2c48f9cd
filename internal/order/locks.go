package order

import (
	"context"
	"fmt"

	"github.com/flashsale/flashsale/internal/dlock"
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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		s.opts.Logger.WarnContext(ctx, "release lock", "key", l.Key(), "err", err)
	}
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

// locker returns the Locker for mode.
func (s *Service) locker(mode dlock.Mode) (dlock.Locker, error) {
	l, ok := s.lockers[mode]
	if !ok || l == nil {
		return nil, fmt.Errorf("order: no locker configured for lock mode %q", mode)
	}
	return l, nil
}

// dedupeKey and productKey name the two locks. Ids may contain ':', so two
// (product, user) pairs can share a dedupe key (product "a", user "b:c" and
// product "a:b", user "c"); the cost is a spurious duplicate_request, never
// an oversell.
func dedupeKey(product, user string) string { return "flashsale:dedupe:" + product + ":" + user }
func productKey(product string) string      { return "flashsale:lock:product:" + product }
