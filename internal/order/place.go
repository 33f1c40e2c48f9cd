package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/stock"
)

// Place places one order for req in the steps the package doc lists,
// numbered in the body below. It is safe for concurrent use: concurrent
// calls for one product, in this process or any other sharing the
// backends, queue on the product lock (unless the product's mode is off).
//
// Errors, and nothing is written in any of these cases: a *FieldError
// wrapping ErrInvalid (see Request.Validate; nothing was sent anywhere);
// stock.ErrNotFound for an unknown product; ErrDuplicateRequest when the
// same buyer's order for the product is in flight; ErrLockTimeout when the
// product lock did not come within the lock wait; ErrDuplicateOrder when
// the buyer already has an order for the product; ErrSoldOut, at once and
// without locking once this process has seen the stock at 0;
// ErrUnavailable when Redis or the database could not be reached, or the
// product lock was lost before the write. When ctx ends first, the error
// wraps ctx.Err().
func (s *Service) Place(ctx context.Context, req Request) (Order, error) {
	// 1. Validate: bad input never reaches Redis or the database.
	if err := req.Validate(); err != nil {
		return Order{}, err
	}
	// 2. Load the product: its lock mode, lock TTL and simulated latency.
	p, err := s.product(ctx, req.ProductID)
	if err != nil {
		return Order{}, err
	}
	// 2b. Sold out already, as seen under the lock: answer without locking.
	if s.soldOut(p.ID) {
		return Order{}, fmt.Errorf("%w: %q (seen earlier)", ErrSoldOut, p.ID)
	}
	locker, err := s.locker(p.LockMode)
	if err != nil {
		return Order{}, err
	}
	// 3. Dedupe lock, one try: if it is held, this buyer's order is in flight.
	dedupe, err := locker.TryLock(ctx, dedupeKey(p.ID, req.UserID), s.dedupeTTL(p))
	if err != nil {
		return Order{}, fromLock(err, "dedupe lock")
	}
	defer s.release(ctx, dedupe) // 6b. released last, after the product lock
	// 4. Product lock, waiting at most the lock wait for the buyers ahead.
	lock, err := locker.Lock(ctx, productKey(p.ID), p.LockTTL, s.opts.LockWait)
	if err != nil {
		return Order{}, fromLock(err, "product lock")
	}
	defer s.release(ctx, lock) // 6a. released first
	// 5. Critical section on the lock's context: a lost lock aborts the write.
	o, err := s.buy(lock.Context(), p, req)
	if err != nil {
		return Order{}, fromCritical(ctx, lock.Context(), err)
	}
	// 6. Release the product lock, then the dedupe lock (the defers above).
	return o, nil
}

// buy is the critical section: read the stock, check it, do the (simulated)
// business work, write the deduction and the order. It must run holding the
// product lock, with ctx the lock's context.
func (s *Service) buy(ctx context.Context, p stock.Product, req Request) (Order, error) {
	// Read-check-write, on purpose. Between this SELECT and the UPDATE below
	// only the product lock keeps a second buyer from reading the same value;
	// without it (mode off, or a naive lock that expired mid-way) two buyers
	// both read n, both write n-1, and the sale oversells. The lock-free ways
	// need no lock for the stock: a conditional
	//   UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?
	// (0 rows affected means sold out; see the benchmark's baseline), or
	// pre-deducting in Redis with a Lua "DECRBY if enough" script and writing
	// the order afterwards.
	left, err := s.readStock(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	if left == 0 {
		s.markSoldOut(p.ID)
	}
	// One order per buyer and product.
	n, err := s.countOrders(ctx, p.ID, req.UserID)
	if err != nil {
		return Order{}, err
	}
	if n > 0 {
		return Order{}, fmt.Errorf("%w: user %q already bought %q", ErrDuplicateOrder, req.UserID, p.ID)
	}
	if left < req.Quantity {
		return Order{}, fmt.Errorf("%w: %q has %d left, asked for %d", ErrSoldOut, p.ID, left, req.Quantity)
	}
	// Simulated business latency, inside the lock where a slow payment call
	// or a GC pause would hit; a stall longer than the TTL is what breaks a
	// naive lock. It ends early if the lock is lost (ctx is the lock's).
	if err := s.opts.Sleep(ctx, s.latency(p)); err != nil {
		return Order{}, err
	}
	// Write the stock we computed, and the order, in one transaction. If the
	// lock is lost meanwhile, ctx cancels the transaction and it rolls back;
	// what no lock can close is the instant between the last renewal and the
	// commit: only a fencing token checked by the database would.
	o := Order{
		ID:        uuid.NewString(),
		UserID:    req.UserID,
		ProductID: p.ID,
		Quantity:  req.Quantity,
		LockMode:  p.LockMode,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE products SET stock = ? WHERE id = ?", left-req.Quantity, p.ID).Error; err != nil {
			return err
		}
		row := toRow(o)
		return tx.Create(&row).Error
	})
	if err != nil {
		return Order{}, err
	}
	return o, nil
}

// readStock reads the stock of product id with a plain SELECT.
func (s *Service) readStock(ctx context.Context, id string) (int, error) {
	var left int
	err := s.db.WithContext(ctx).Raw("SELECT stock FROM products WHERE id = ?", id).Row().Scan(&left)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: product %q", stock.ErrNotFound, id)
	}
	return left, err
}

// countOrders counts the orders user has for product (the index
// orders_product_user answers it).
func (s *Service) countOrders(ctx context.Context, product, user string) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).
		Raw("SELECT COUNT(*) FROM orders WHERE product_id = ? AND user_id = ?", product, user).
		Row().Scan(&n)
	return n, err
}

// dedupeTTL is the TTL of the dedupe lock: as long as an order may take,
// the lock wait plus one product-lock TTL, so that the lock outlives a
// request that queues for the product lock even where nothing renews it
// (naive). Where a watchdog renews it (lua, redlock), a long TTL also means
// few renewals from the buyers waiting in the queue.
func (s *Service) dedupeTTL(p stock.Product) time.Duration {
	return s.opts.LockWait + p.LockTTL
}

// latency is the simulated business latency of one critical section: the
// product's work, plus its stall with probability StallRate.
func (s *Service) latency(p stock.Product) time.Duration {
	d := p.Work
	if p.Stall > 0 && p.StallRate > 0 && s.opts.Rand() < p.StallRate {
		d += p.Stall
	}
	return d
}
