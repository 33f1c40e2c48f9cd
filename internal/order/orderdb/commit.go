package orderdb

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Writer writes sales to one database. It is safe for concurrent use.
type Writer struct {
	db   *gorm.DB
	late func(lock *dlock.Lock, p stock.Product) *gorm.DB
}

// NewWriter returns a Writer on db, which stays the caller's. late, if not
// nil, is the late-commit fault (stock.Product.LateCommit): Commit runs
// such a product's transactions on the wrapper late returns for it.
func NewWriter(db *gorm.DB, late func(lock *dlock.Lock, p stock.Product) *gorm.DB) *Writer {
	return &Writer{db: db, late: late}
}

// DB is the database the Writer writes to, for reads.
func (w *Writer) DB() *gorm.DB { return w.db }

// Commit runs stmts in one transaction and commits it, all on ctx (for the
// locking strategies the lock's context, so a lost lock or a buyer who hung
// up rolls it back). lock (nil without one) and p are for the late-commit
// fault (NewWriter). A deadlock's victim, or a lock wait timeout (InnoDB
// deadlocks when a repeated click's INSERTs meet on one unique key), is run
// again, up to conflictTries times: stmts must be safe to run again. An
// error from the COMMIT itself is a *commitError: sent, and whether it
// landed is not known (AfterFailure).
func (w *Writer) Commit(ctx context.Context, lock *dlock.Lock, p stock.Product, stmts func(tx *gorm.DB) error) error {
	db := w.db
	if p.LateCommit > 0 && w.late != nil {
		db = w.late(lock, p)
	}
	return againOnConflict(ctx, func() error { return transact(ctx, db, stmts) })
}

// againOnConflict runs try until it ends in anything but a conflict
// (stock.IsConflict), at most conflictTries times, and returns its last
// error.
func againOnConflict(ctx context.Context, try func() error) error {
	var err error
	for n := range conflictTries {
		if n > 0 {
			// Out of step with the other victims, or they meet again.
			if Sleep(ctx, time.Duration(n)*time.Millisecond+rand.N(2*time.Millisecond)) != nil {
				return err
			}
		}
		err = try()
		if !stock.IsConflict(err) {
			return err
		}
	}
	return err
}

// conflictTries is how often Commit runs a transaction the database rolled
// back for a deadlock or a lock wait timeout.
const conflictTries = 5

// transact is one try of Commit, on db.
func transact(ctx context.Context, db *gorm.DB, stmts func(tx *gorm.DB) error) error {
	committing := false
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := stmts(tx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err // the lock was lost, or the buyer hung up: roll back
		}
		committing = true
		return nil
	})
	// A context error from Commit, or sql.ErrTxDone, means database/sql never
	// sent it (drivers' Commit takes no context): not a *commitError.
	if err != nil && committing && !stock.IsConflict(err) && !errors.Is(err, sql.ErrTxDone) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return &commitError{err: err}
	}
	return err
}

// commitError is the error of a transaction whose statements all ran and
// whose COMMIT failed: it was sent, and may have landed (its answer may be
// what was lost).
type commitError struct{ err error }

func (c *commitError) Error() string { return "commit: " + c.err.Error() }
func (c *commitError) Unwrap() error { return c.err }
