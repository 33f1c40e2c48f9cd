package order

import (
	"context"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// The late-commit fault shows why a lease is not a mutex
// (stock.Product.LateCommit): for the orders isLate chooses, once the
// statements have run, the shop holds back both the COMMIT and the lock's
// renewals for the product's LateCommit, then commits regardless of the
// lock, as a COMMIT already on the wire when the network stalled would.
// With a 100 ms TTL and a 300 ms hold, the lease runs out under the holder
// and the next buyer reads the stock before the old commit lands: lua and
// redlock then oversell; fenced and etcd do not (fence.go).

// isLate reports whether this order, which is about to commit, is one the
// late-commit fault holds back: in this process, the product's first order
// to reach its commit, then every LateCommitEvery-th after it. Counting
// rather than drawing makes the fault hit every run alike.
func (s *Service) isLate(p stock.Product) bool {
	if p.LateCommit <= 0 {
		return false
	}
	every := int64(max(p.LateCommitEvery, 1))
	n := s.events(p.ID).commits.Add(1)
	return (n-1)%every == 0
}

// holdLate holds back a transaction's COMMIT for p's LateCommit, with
// lock's renewals (lock is nil without one), and cuts the transaction's
// context, txCtx, loose from ctx's end (follow), so that the commit lands
// after the lease has run out. If ctx has ended already it returns ctx's
// error and the transaction rolls back.
func (s *Service) holdLate(ctx, txCtx context.Context, lock *dlock.Lock, p stock.Product, follow func() bool) error {
	if !follow() {
		return ctx.Err() // ctx ended first: this one rolls back
	}
	if lock != nil {
		lock.HoldRenewals(p.LateCommit)
	}
	s.happened(p.ID, p.Strategy, EventLateCommit)
	return sleep(txCtx, p.LateCommit) // then COMMIT, lock or no lock
}
