package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// errStaleFence is why a fenced holder was refused: the database had
// already registered a fencing token at least as high as its own.
var errStaleFence = errors.New("order: stale fencing token")

// buyFenced is the critical section of strategy fenced: buy's
// read-check-write, in one transaction that starts by registering the
// lock's fencing token with the database. It must run holding lock, a
// lock of mode fenced, on ctx, as buy does.
//
// Registering first, before the read, is what makes it safe. Say holder A
// (token 33) has run its statements when its network stalls: its lease
// runs out and holder B (token 34) gets the lock while A's COMMIT is still
// on the wire. Fencing only the final write would let B read the stock,
// then A's commit land, then B write a stock computed from what it read
// before A's sale: a lost update, even though every write carried a fresh
// token. Registered first, B's token goes through the same row as A's
// writes: B's UPDATE waits for A's transaction to commit (or roll back),
// and only then does B read, so it reads A's sale. And a holder whose
// lease ran out before it registered finds a newer token there and is
// refused (ErrLockLost) before it has read or written anything, if that
// newer registration committed: one whose transaction rolled back leaves
// the older token behind, and the stale holder then registers and sells.
// That loses nothing: the newer holder wrote nothing, and the stale one's
// registration holds the row until it commits, as any holder's does.
func (s *Service) buyFenced(ctx context.Context, lock *dlock.Lock, p stock.Product, req Request) (Order, error) {
	fence := lock.Fence()
	o := newOrder(p, req)
	err := s.commit(ctx, lock, p, func(tx *gorm.DB) error {
		// 1. Register the token: zero rows means a newer holder exists.
		if err := s.registerFence(ctx, tx, p, fence); err != nil {
			return err
		}
		// 2. Read and check, now that no older holder can still commit: its
		// transaction held this row, and the UPDATE above waited for it. A
		// refused order still commits its registration: an older holder
		// must not slip in behind it.
		left, err := s.check(ctx, tx, p, req)
		if errors.Is(err, ErrSoldOut) || errors.Is(err, ErrDuplicateOrder) {
			return commitAnyway{err}
		}
		if err != nil {
			return err
		}
		if err := s.work(ctx, p); err != nil {
			return err
		}
		// 3. Write, checking the token again.
		if err := s.writeStockFenced(ctx, tx, p, left-req.Quantity, fence); err != nil {
			return err
		}
		row := toRow(o)
		return tx.Create(&row).Error
	})
	if err != nil && !s.landedDespiteLock(ctx, o, err) {
		return Order{}, err
	}
	return o, nil
}

// registerFence registers fence, the holder's token, for product p in tx,
// before anything is read: it returns errStaleFence (counted) if the
// database has seen a token at least as high. The row stays locked by tx
// until it ends, so no older holder can commit meanwhile.
func (s *Service) registerFence(ctx context.Context, tx *gorm.DB, p stock.Product, fence int64) error {
	res := tx.Exec("UPDATE products SET fence = ? WHERE id = ? AND fence < ?", fence, p.ID, fence)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return s.fencedOut(ctx, tx, p, fence)
	}
	return nil
}

// writeStockFenced writes product p's stock in tx, where the token registered
// is still fence: nobody can have replaced it while tx holds the row, but
// the write should say what it relies on.
func (s *Service) writeStockFenced(ctx context.Context, tx *gorm.DB, p stock.Product, left int, fence int64) error {
	res := tx.Exec("UPDATE products SET stock = ? WHERE id = ? AND fence = ?", left, p.ID, fence)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return s.fencedOut(ctx, tx, p, fence)
	}
	return nil
}

// fencedOut counts a refused holder and returns its error, naming the
// token the database holds.
func (s *Service) fencedOut(ctx context.Context, tx *gorm.DB, p stock.Product, fence int64) error {
	s.happened(p.ID, p.Strategy, EventFencedOut)
	var seen int64
	if err := tx.WithContext(ctx).Raw("SELECT fence FROM products WHERE id = ?", p.ID).Row().Scan(&seen); err != nil {
		return fmt.Errorf("%w: token %d refused: %w", errStaleFence, fence, err)
	}
	return fmt.Errorf("%w: token %d refused, the database has seen %d", errStaleFence, fence, seen)
}
