package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Fencing: what a token promises, and why it is registered first.
//
// Strategies fenced and etcd hand every grant of the product lock a
// fencing token that grows with each grant (dlock.Lock.Fence, and for
// etcd the cluster's epoch, dlock.Lock.Epoch, before it). The database
// keeps the highest token registered for the product, and sell registers
// its lock's token as the first statement of its transaction:
//
//	UPDATE products SET fence_epoch = ?, fence = ?
//	WHERE id = ? AND (fence_epoch < ? OR (fence_epoch = ? AND fence < ?))
//
// (the pair (fence_epoch, fence) below the new pair, spelled out).
//
// Zero rows means a newer holder registered first: the holder is refused
// (ErrFencedOut) before it has read or written anything.
//
// Registering first, before the read, is what makes it safe. Say holder A
// (token 33) has run its statements when its network stalls: its lease
// runs out and holder B (token 34) gets the lock while A's COMMIT is still
// on the wire. Fencing only the final write would let B read the stock,
// then A's commit land, then B write a stock computed from what it read
// before A's sale: a lost update, even though every write carried a fresh
// token. Registered first, B's token goes through the same row as A's
// writes: B's UPDATE waits for A's transaction to commit (or roll back),
// and only then does B read, so it reads A's sale.
//
// What it does not promise: a stale holder is refused only if the newer
// registration committed. One whose transaction rolled back (its buyer
// hung up) leaves the older token behind, and the stale holder then
// registers and sells. That loses nothing: the newer holder wrote nothing,
// and the stale one's registration holds the row until it commits, as any
// holder's does. A sale refused as a duplicate or sold out still commits
// its registration, so that an older holder cannot slip in behind it; a
// holder the fence refuses rolls back, having written nothing.

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

// writeStock writes product p's stock in tx. Under a fence it checks that
// the token registered is still f: nobody can have replaced it while tx
// holds the row, but the write should say what it relies on.
func (s *Service) writeStock(ctx context.Context, tx *gorm.DB, p stock.Product, left int, f fence) error {
	if f.none() {
		return tx.Exec("UPDATE products SET stock = ? WHERE id = ?", left, p.ID).Error
	}
	res := tx.Exec("UPDATE products SET stock = ? WHERE id = ? AND fence_epoch = ? AND fence = ?",
		left, p.ID, f.epoch, f.token)
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
