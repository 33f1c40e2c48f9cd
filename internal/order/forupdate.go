package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeForUpdate is strategy sql-for-update: the database's lock on the
// product's row and no other (no Redis, no dedupe lock). One transaction
// reads, checks, works and writes, its steps below. The read-check-write
// is safe here for a reason no lease gives: the row stays locked until the
// transaction ends or its connection dies, however late the COMMIT lands.
// The price: the lock is held across the work, and every waiting buyer
// holds a pooled connection meanwhile. The unique key (orderdb.Insert)
// keeps one order per buyer too.
func (s *Service) placeForUpdate(ctx context.Context, p stock.Product, req Request) (Order, error) {
	o := s.newOrder(p, req)
	start := time.Now()
	var got time.Time // when the row lock came (the last try's, after a deadlock)
	row := s.writer.RowHold()
	err := s.writer.Commit(ctx, nil, p, func(tx *gorm.DB) error {
		row.Began() // on SQLite, BEGIN took the lock
		got = time.Time{}
		// 1. The row lock, and the stock under it (SELECT … FOR UPDATE),
		// waiting at most the lock wait for the buyer ahead (forupdate_row.go).
		left, err := s.lockRow(ctx, tx, p)
		if err != nil {
			return err
		}
		row.Took()
		got = row.Start()
		// 2. Check the buyer and the stock, the one rule (allocate).
		sh, err := s.shelfOf(ctx, tx, p.ID, left, []string{req.UserID})
		if err != nil {
			return err
		}
		left, err = allocate(o, sh.left, sh.bought)
		if err != nil {
			return err
		}
		// 3. The business work, the row locked.
		if err := s.work(ctx, p); err != nil {
			return err
		}
		// 4. The stock computed from what was read, and the order; the
		// commit lets the row go.
		if err := s.writeStock(ctx, tx, p, left, fence{}); err != nil {
			return err
		}
		return orderdb.Insert(tx, o)
	})
	o, err = s.forUpdateResult(ctx, p, o, err)
	s.observeRowLock(ctx, p, start, got, err)
	return o, err
}

// observeRowLock tells the observer how the ask for p's row lock went,
// started at start, and, if the lock came at got, how long it was held:
// the row lock's wait and hold are the locks' series.
func (s *Service) observeRowLock(ctx context.Context, p stock.Product, start, got time.Time, err error) {
	if got.IsZero() {
		s.opts.Observer.LockWaited(p.Strategy, outcomeFor(ctx, err), time.Since(start))
		return
	}
	s.opts.Observer.LockWaited(p.Strategy, "acquired", got.Sub(start))
	s.held(p, time.Since(got))
}

// forUpdateResult is what the buyer of o is told after its transaction
// ended with err.
func (s *Service) forUpdateResult(ctx context.Context, p stock.Product, o Order, err error) (Order, error) {
	switch {
	case err == nil:
		return o, nil
	case errors.Is(err, ErrSoldOut), errors.Is(err, ErrDuplicateOrder), errors.Is(err, ErrLockTimeout):
		return Order{}, err
	case errors.Is(err, orderdb.ErrDuplicateKey):
		return Order{}, s.writer.Duplicate(ctx, p.ID, o.UserID)
	}
	err = s.writer.AfterFailure(ctx, o, err)
	switch {
	case err == nil:
		return o, nil // the COMMIT's answer was lost, and it had landed
	case stock.IsLockWaitTimeout(err) && !errors.Is(err, ErrInDoubt):
		// The wait ran out before the transaction began: on SQLite every
		// transaction waits for the database's write lock at BEGIN, for up
		// to its busy timeout (forupdate_row.go).
		return Order{}, fmt.Errorf("%w: waiting for the database's lock: %v", ErrLockTimeout, err)
	}
	return Order{}, orderdb.FromWrite(ctx, err)
}
