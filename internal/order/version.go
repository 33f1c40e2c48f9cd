package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeVersioned is strategy sql-version, the optimistic lock: nothing is
// locked while the buyer is served. Each try (tryVersioned) reads, checks
// and works, then writes only if the version is still the one it read
// (setIfVersion). Zero rows means another buyer wrote first: the try is
// thrown away (EventVersionMoved) and the buyer tries again after a
// jittered pause, up to versionTries times, then gets ErrVersionConflict.
// Exact, and wasteful under one hot product: each round has one winner.
func (s *Service) placeVersioned(ctx context.Context, p stock.Product, req Request) (Order, error) {
	for try := 1; ; try++ {
		o, err := s.tryVersioned(ctx, p, req)
		if !errors.Is(err, errVersionMoved) {
			return o, err
		}
		s.happened(p.ID, p.Strategy, EventVersionMoved)
		if try == versionTries {
			return Order{}, fmt.Errorf("%w: %q, %d tries", ErrVersionConflict, p.ID, try)
		}
		if err := orderdb.Sleep(ctx, versionPause(p, try)); err != nil {
			return Order{}, fmt.Errorf("order: %w: after %d tries outrun", err, try)
		}
	}
}

// versionTries bounds the tries of one sql-version order: each round has a
// single winner, so more tries barely raise a buyer's odds while adding to
// everyone's load; past it the buyer gets a retryable 503 version_conflict.
const versionTries = 5

// versionPause is the wait before try+1: full jitter over a window that
// starts at one try's length (the work and a millisecond), doubles with
// each try and stops at a second, so one round's losers do not meet again.
func versionPause(p stock.Product, try int) time.Duration {
	return rand.N(min((p.Work+time.Millisecond)<<try, time.Second))
}

// errVersionMoved is a try whose write found the version moved on.
var errVersionMoved = errors.New("order: the product's version moved on since it was read")

// setIfVersion writes a sql-version sale's stock and moves the version
// on, if the version is still the one read. Its arguments: the stock
// left, the product, the version read.
const setIfVersion = "UPDATE products SET stock = ?, version = version + 1 WHERE id = ? AND version = ?"

// tryVersioned is one try of placeVersioned: the order, or
// errVersionMoved, or why not.
func (s *Service) tryVersioned(ctx context.Context, p stock.Product, req Request) (Order, error) {
	// 1. Read the stock, its version and the buyer's orders: no lock.
	var left int
	var version int64
	err := s.db.WithContext(ctx).Raw("SELECT stock, version FROM products WHERE id = ?", p.ID).
		Row().Scan(&left, &version)
	row := s.writer.RowHold() // the window a rival's write would close opens here
	row.Took()
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, fmt.Errorf("%w: product %q", stock.ErrNotFound, p.ID)
	}
	if err != nil {
		return Order{}, orderdb.FromWrite(ctx, err)
	}
	sh, err := s.shelfOf(ctx, s.db, p.ID, left, []string{req.UserID})
	if err != nil {
		return Order{}, orderdb.FromWrite(ctx, err)
	}
	// 2. Check the buyer and the stock, the one rule (allocate).
	o := s.newOrder(p, req)
	left, err = allocate(o, sh.left, sh.bought)
	if err != nil {
		return Order{}, err
	}
	// 3. The business work, nothing held.
	if err := s.work(ctx, p); err != nil {
		return Order{}, fmt.Errorf("order: %w", err)
	}
	// 4. The order (the unique key keeps one per buyer), and the stock if
	// nobody wrote since the read.
	err = s.writer.Commit(ctx, nil, p, func(tx *gorm.DB) error {
		if err := orderdb.Insert(tx, o); err != nil {
			return err
		}
		res := tx.Exec(setIfVersion, left, p.ID, version)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errVersionMoved
		}
		return nil
	})
	switch {
	case errors.Is(err, errVersionMoved):
		return Order{}, err
	case errors.Is(err, orderdb.ErrDuplicateKey):
		return Order{}, s.writer.Duplicate(ctx, p.ID, req.UserID)
	case err != nil:
		if err := s.writer.AfterFailure(ctx, o, err); err != nil {
			return Order{}, orderdb.FromWrite(ctx, err)
		}
	}
	s.rowHeld(p, row) // a winner's window: a lost try's overlapped it
	return o, nil
}
