package order

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/order/redisqueue"
)

// WriteQueued writes a batch of queued orders of product as s's
// consumers would (redisqueue.Seller.WriteQueued), for tests that write
// one by hand.
func (s *Service) WriteQueued(ctx context.Context, product string, orders []redisqueue.Order) ([]*redisqueue.Refusal, int, error) {
	return s.redisQueue.WriteQueued(ctx, product, orders)
}

// Queued returns how many buyers of product wait in s's batch queue
// (batch_waiters.go) and have not given up, for tests that wait until a
// batch has formed behind a held lock.
func (s *Service) Queued(product string) int {
	v, ok := s.batches.Load(product)
	if !ok {
		return 0
	}
	q := v.(*batchQueue)
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, w := range q.waiting {
		if w.state.Load() == waiterQueued {
			n++
		}
	}
	return n
}

// DedupeKey is the key of user's dedupe lock on product, for tests that
// hold it from outside a shop.
func DedupeKey(product, user string) string { return dedupeKey(product, user) }

// WaitAsMySQL makes s bound sql-for-update's wait for the row as it does on
// MySQL 8 (the session's lock wait timeout), for tests on MariaDB, which
// honours that too.
func (s *Service) WaitAsMySQL() { s.flavor.Store(flavorMySQL) }

// VersionTries is how many tries a sql-version order makes.
const VersionTries = versionTries

// NaiveSweepSplit runs the naive sweep's read now and returns its write,
// for a test to put a payment or another sweep between the two.
func NaiveSweepSplit(ctx context.Context, s *Service) (write func() (int, error), err error) {
	due, err := s.naiveDue(ctx)
	return func() (int, error) { return s.naiveExpire(ctx, due) }, err
}

// CrashAfterReturnCommit makes s leave every return it commits owed to
// Redis, as a shop killed between the database's commit and Redis would:
// another shop's sweep must finish them.
func CrashAfterReturnCommit(s *Service) { s.crashAfterCommit.Store(true) }

// KeepPaidReturns sets how long s keeps a paid return owed before its
// last send (owed.go), for tests that lose a return in Redis after it
// was paid and wait for the send that repairs it.
func KeepPaidReturns(s *Service, d time.Duration) { s.owedKeep = d }

// PayOwedAfter sets how old an unpaid owed row is before s's sweep pays
// it (owed.go's grace for the shop that wrote it), for tests that leave a
// return owed on purpose (a crashed shop, Redis down) and would otherwise
// wait the default out before each sweep can finish it.
func PayOwedAfter(s *Service, d time.Duration) { s.owedGrace = d }
