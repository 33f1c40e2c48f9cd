package order

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// commit runs stmts in one transaction and commits it. The statements run
// on ctx (for the locking strategies the lock's context, so that a lost
// lock cancels them), and the transaction is rolled back instead of
// committed if ctx has ended by then; except for an order the late-commit
// fault holds back (late.go), which commits regardless of the lock. lock
// is nil for the strategies without one.
//
// A transaction the database chose as a deadlock's victim (or whose lock
// wait timed out) is rolled back and run again, up to conflictTries times:
// InnoDB deadlocks when buyers' INSERTs meet on one unique key (a repeated
// click) and the first of them rolls back.
//
// An error from the COMMIT itself is a *commitError: the COMMIT was sent,
// and whether it landed is not known (see afterFailure).
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
	committing := false
	err := s.db.WithContext(txCtx).Transaction(func(tx *gorm.DB) error {
		err := stmts(tx.WithContext(ctx))
		var keep commitAnyway
		switch {
		case errors.As(err, &keep):
			outcome = keep.err
			err = ctx.Err()
		case err != nil:
			return err
		case s.isLate(p):
			err = s.holdLate(ctx, txCtx, lock, p, follow)
		default:
			err = ctx.Err()
		}
		committing = err == nil
		return err
	})
	switch {
	case err != nil && committing && !stock.IsConflict(err) && !errors.Is(err, txCtx.Err()):
		// (A context error from Commit means database/sql did not send it:
		// drivers' Commit takes no context, so only its check before
		// sending can say "canceled".)
		return &commitError{err: err}
	case err != nil:
		return err
	}
	return outcome
}

// commitAnyway is what stmts return to have their transaction committed
// all the same, and err (which may be nil) returned after the commit: a
// sale that sold nothing but left something that must stay (a registered
// fence). The late-commit fault holds back no such commit: it sold nothing.
type commitAnyway struct{ err error }

func (c commitAnyway) Error() string { return fmt.Sprint("nothing sold: ", c.err) }
func (c commitAnyway) Unwrap() error { return c.err }

// commitError is the error of a transaction whose statements all ran and
// whose COMMIT failed: it was sent, and may have landed (its answer may be
// what was lost).
type commitError struct{ err error }

func (c *commitError) Error() string { return "commit: " + c.err.Error() }
func (c *commitError) Unwrap() error { return c.err }
