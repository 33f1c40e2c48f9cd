package order

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// commit runs stmts in one transaction and commits it. The statements run
// on ctx (for the locking strategies the lock's context, so that a lost
// lock cancels them), and the transaction is rolled back instead of
// committed if ctx has ended by then.
//
// Except for a late commit, the fault that shows why a lease is not a
// mutex (stock.Product.LateCommit): for the orders isLate chooses, once the
// statements have run, the shop holds back both the COMMIT and lock's
// renewals for the product's LateCommit, then commits regardless of the
// lock, as a COMMIT already on the wire when the network stalled would.
// With a 100 ms TTL and a 300 ms hold, the lease runs out under the
// holder and the next buyer reads the stock before the old commit lands:
// lua and redlock then oversell; fenced does not (see buyFenced). lock is
// nil for the strategies without one.
//
// A transaction the database chose as a deadlock's victim (or whose lock
// wait timed out) is rolled back and run again, up to conflictTries times:
// InnoDB deadlocks when buyers' INSERTs meet on one unique key (a repeated
// click) and the first of them rolls back.
func (s *Service) commit(ctx context.Context, lock *dlock.Lock, p stock.Product, stmts func(tx *gorm.DB) error) error {
	var err error
	for try := range conflictTries {
		if try > 0 {
			// Out of step with the other victims, or they meet again.
			if sleep(ctx, time.Duration(try)*time.Millisecond+rand.N(2*time.Millisecond)) != nil {
				return err
			}
		}
		err = s.transact(ctx, lock, p, stmts)
		if !stock.IsConflict(err) {
			return err
		}
	}
	return err
}

// conflictTries is how often commit runs a transaction the database rolled
// back for a deadlock or a lock wait timeout.
const conflictTries = 5

// transact is one try of commit.
func (s *Service) transact(ctx context.Context, lock *dlock.Lock, p stock.Product, stmts func(tx *gorm.DB) error) error {
	// The transaction follows ctx, as the statements do, so that a lost
	// lock or a buyer who hung up rolls it back (and stops its wait for a
	// connection); only a late commit cuts that tie, to outlive the lease.
	txCtx, cancelTx := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelTx()
	follow := context.AfterFunc(ctx, cancelTx)
	defer follow()
	var outcome error
	err := s.db.WithContext(txCtx).Transaction(func(tx *gorm.DB) error {
		err := stmts(tx.WithContext(ctx))
		var keep commitAnyway
		switch {
		case errors.As(err, &keep):
			outcome = keep.err
			return ctx.Err()
		case err != nil:
			return err
		}
		if s.isLate(p) {
			if !follow() {
				return ctx.Err() // ctx ended first: this one rolls back
			}
			if lock != nil {
				lock.HoldRenewals(p.LateCommit)
			}
			s.happened(p.ID, p.Strategy, EventLateCommit)
			return sleep(txCtx, p.LateCommit) // then COMMIT, lock or no lock
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	return outcome
}

// commitAnyway is what stmts return to have their transaction committed
// all the same, and err returned after the commit: a refused order whose
// statements left something that must stay (fenced's registration).
type commitAnyway struct{ err error }

func (c commitAnyway) Error() string { return c.err.Error() }
func (c commitAnyway) Unwrap() error { return c.err }

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
