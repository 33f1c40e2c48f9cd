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
// waits on ctx (the caller's context, or the lock's, which ends when the
// lock is lost while the caller still waits). Only a transaction whose
// COMMIT was sent (a *commitError) may have written anything; for it the
// database is asked whether o is there after all, a COMMIT that landed
// and whose answer was lost:
//   - nil: o landed, and is the buyer's, lock or no lock;
//   - err wrapped with ErrInDoubt: the database could not tell in time, so
//     o may exist; the buyer's retry finds it (ErrDuplicateOrder, with its
//     id) or buys, never both (see ErrInDoubt for the strategies without a
//     fence);
//   - err as it is: o is not there, or the COMMIT was never sent.
//
// When nobody waits for the answer any more (ctx ended, not for a lost
// lock), the database is not asked, and the error is ErrInDoubt too,
// wrapping ctx's error.
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
// is still writing its product's row: a COMMIT whose answer was lost may
// still be on its way (the server finishing a slow fsync after the client
// gave up on the connection), and until it lands or rolls back it holds
// that row, which every sale writes, or, for an order with a Bucket, its
// bucket's row (a bucketed sql-atomic sale writes no other). A plain read
// would not wait for it, and would answer "not there" about an order that
// lands a moment later. So it asks in a transaction that first takes the
// rows (TakeRow, TakeBucketRow), then reads, and rolls back. It waits at most settleWait, on a context that
// survives the caller's; err says the database could not tell in that
// time.
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

// settleWait bounds Settled's wait: ReleaseTimeout, except on SQLite,
// which waits for its write lock in a busy handler that no context
// interrupts, for up to its busy timeout: the bound there is that, and a
// second for the read after it, lest an order that landed at the end of
// the wait be answered in doubt.
func (w *Writer) settleWait() time.Duration {
	if w.db.Dialector.Name() == "sqlite" {
		return database.SQLiteBusyTimeout + time.Second
	}
	return ReleaseTimeout
}
