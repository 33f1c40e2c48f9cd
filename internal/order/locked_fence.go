package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Fencing (strategies fenced and etcd): every grant of the product lock
// carries a token that grows with each grant (dlock.Lock.Fence, behind
// dlock.Lock.Epoch; fenced's is the INCR of "<key>:fence" that dlock's
// scripts/acquire.lua runs with the SET NX). sell registers it as the
// first statement of its transaction (registerFence); zero rows means a
// newer holder registered first, and this one is refused (ErrFencedOut)
// before it has read anything.
//
// Why first, before the read: a newer holder's registration then waits on
// the row a stale holder's transaction holds, and reads its sale; fencing
// only the write would let the newer one read, the stale commit land, and
// the newer one write a stock that lost an update. What it does not
// promise: if the newer holder's transaction rolled back, a stale one may
// still register and sell; nothing is lost, the newer one wrote nothing.
// A sale refused as duplicate or sold out still commits its registration,
// so no older holder slips in behind it (docs/fenced-etcd.md).

// fence is a grant's fencing token as the database orders it: by epoch,
// then by token. The zero fence is none: the lock mints no tokens.
type fence struct{ epoch, token int64 }

// fenceOf returns lock's fence (none for a lock that mints none).
func fenceOf(lock *dlock.Lock) fence {
	return fence{epoch: lock.Epoch(), token: lock.Fence()}
}

func (f fence) none() bool { return f == fence{} }

func (f fence) String() string { return fmt.Sprintf("%d/%d", f.epoch, f.token) }

// registerFence registers f, the holder's token, for product p in tx,
// before anything is read: it returns an error wrapping ErrFencedOut
// (counted) if the database has seen a token at least as high. The row
// stays locked by tx until it ends, so no older holder can commit
// meanwhile. A zero fence registers nothing.
func (s *Service) registerFence(ctx context.Context, tx *gorm.DB, p stock.Product, f fence) error {
	if f.none() {
		return nil
	}
	res := tx.Exec(`UPDATE products SET fence_epoch = ?, fence = ?
		WHERE id = ? AND (fence_epoch < ? OR (fence_epoch = ? AND fence < ?))`,
		f.epoch, f.token, p.ID, f.epoch, f.epoch, f.token)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return s.fencedOut(ctx, tx, p, f)
	}
	return nil
}

// fencedOut counts a refused holder and returns its error, naming the
// token the database holds.
func (s *Service) fencedOut(ctx context.Context, tx *gorm.DB, p stock.Product, f fence) error {
	s.happened(p.ID, p.Strategy, EventFencedOut)
	var seen fence
	err := tx.WithContext(ctx).Raw("SELECT fence_epoch, fence FROM products WHERE id = ?", p.ID).
		Row().Scan(&seen.epoch, &seen.token)
	if err != nil {
		return fmt.Errorf("%w: token %v refused: %w", ErrFencedOut, f, err)
	}
	return fmt.Errorf("%w: token %v refused, the database has seen %v", ErrFencedOut, f, seen)
}

// errWithdrawn is the answer of a batched buyer that gave up before its
// batch allocated it; it has returned already, so nobody reads it.
var errWithdrawn = errors.New("order: withdrawn from its batch")
