package orderdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/dlock"
)

// AfterFailure says what the failed write of order o means for whoever
// waits on ctx (the caller's, or the lock's). Only a *commitError (COMMIT
// sent) may have written anything, and for it the database is asked:
//   - nil: o landed, and is the buyer's, lock or no lock;
//   - err wrapped with ErrInDoubt: the database could not tell in time, or
//     ctx ended (not for a lost lock) and nobody waits; the buyer's retry
//     finds o (ErrDuplicateOrder) or buys, never both;
//   - err as it is: o is not there, or the COMMIT was never sent.
func (w *Writer) AfterFailure(ctx context.Context, o Order, err error) error {
	var ce *commitError
	if !errors.As(err, &ce) {
		return err
	}
	return w.afterSent(ctx, o, err, w.Settled)
}

// afterSent is AfterFailure for a write whose COMMIT was sent: settled
// says whether o is in the database (found), or could not tell (err).
func (w *Writer) afterSent(ctx context.Context, o Order, err error,
	settled func(context.Context, Order) (bool, error)) error {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), dlock.ErrNotHeld) {
		// The caller gave up: nobody waits for the database's answer, and
		// the honest one is still "may exist".
		return fmt.Errorf("%w: %w: %w", ErrInDoubt, ctx.Err(), err)
	}
	found, qerr := settled(ctx, o)
	switch {
	case qerr != nil:
		return fmt.Errorf("%w: %w", ErrInDoubt, err)
	case found:
		return nil
	}
	return err
}

// Landed reports whether order id's row is in the database now, with a
// plain read that waits for nobody (Settled is the one that waits for a
// COMMIT still on its way). It asks on a context that survives the
// caller's, briefly; err says the database could not tell.
func (w *Writer) Landed(ctx context.Context, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseTimeout)
	defer cancel()
	var n int64
	err := w.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM orders WHERE id = ?", id).Row().Scan(&n)
	return n > 0, err
}

// Settled reports whether order o is in the database once no transaction
// is still writing its product's row (or its bucket's): a COMMIT whose
// answer was lost may still land, and holds that row until it does. A
// plain read would not wait and could answer "not there" a moment too
// early, so it takes the rows first (TakeRow, TakeBucketRow), reads, and
// rolls back, within settleWait on a context that survives the caller's;
// err says the database could not tell in that time.
func (w *Writer) Settled(ctx context.Context, o Order) (found bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.settleWait())
	defer cancel()
	tx := w.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		return false, tx.Error
	}
	defer tx.Rollback()
	if err := TakeRow(tx, o.ProductID); err != nil {
		return false, err
	}
	if o.Bucket != nil {
		if err := TakeBucketRow(tx, o.ProductID, *o.Bucket); err != nil {
			return false, err
		}
	}
	var n int64
	err = tx.Raw("SELECT COUNT(*) FROM orders WHERE id = ?", o.ID).Row().Scan(&n)
	return n > 0, err
}

// settleWait bounds Settled's wait: ReleaseTimeout, but on SQLite, whose
// busy handler no context interrupts, its busy timeout and a second for
// the read, lest an order landing at the end be answered in doubt.
func (w *Writer) settleWait() time.Duration {
	if w.db.Dialector.Name() == "sqlite" {
		return database.SQLiteBusyTimeout + time.Second
	}
	return ReleaseTimeout
}
