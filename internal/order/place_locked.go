package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeLocked is the order flow of the locking strategies (off, naive, lua,
// redlock, fenced), in the steps numbered below after Place's.
func (s *Service) placeLocked(ctx context.Context, p stock.Product, req Request) (Order, error) {
	lockers, err := s.lockersFor(p.Strategy)
	if err != nil {
		return Order{}, err
	}
	if p.BatchMax > 0 && p.Strategy.Batches() {
		// 4-7 for many buyers at once, under one lock (batch.go).
		return s.placeBatched(ctx, p, req, lockers.product)
	}
	// 4. Dedupe lock, one try: if it is held, this buyer's order is in flight.
	dedupe, err := lockers.dedupe.TryLock(ctx, dedupeKey(p.ID, req.UserID), s.dedupeTTL(p))
	if err != nil {
		return Order{}, fromLock(err, "dedupe lock")
	}
	defer s.release(ctx, dedupe) // 7b. released last, after the product lock
	// 5. Product lock, waiting at most the lock wait for the buyers ahead.
	lock, err := s.lockProduct(ctx, lockers.product, p)
	if err != nil {
		return Order{}, err
	}
	defer s.releaseProduct(ctx, p, lock, time.Now()) // 7a. released first; held from now
	// 6. Critical section on the lock's context: a lost lock aborts the work
	// and rolls the transaction back (all but a late commit; see late.go).
	buy := s.buy
	if p.Strategy.Fences() {
		buy = s.buyFenced
	}
	o, err := buy(lock.Context(), lock, p, req)
	if err != nil {
		return Order{}, s.fromCritical(ctx, lock.Context(), p, err)
	}
	// 7. Release the product lock, then the dedupe lock (the defers above).
	return o, nil
}

// buy is the critical section: read the stock, check it, do the (simulated)
// business work, write the deduction and the order. It must run holding
// lock, the product lock, on ctx, the lock's context (a test may pass
// another, to play a holder that does not know its lease ran out).
func (s *Service) buy(ctx context.Context, lock *dlock.Lock, p stock.Product, req Request) (Order, error) {
	// Read-check-write, on purpose. Between this SELECT and the UPDATE below
	// only the product lock keeps a second buyer from reading the same value;
	// without it (off, or a naive lock that expired mid-way) two buyers both
	// read n, both write n-1, and the sale oversells. The lock-free
	// strategies need no lock for the stock: see place_atomic.go and
	// place_reserved.go.
	left, err := s.check(ctx, s.db, p, req)
	if err != nil {
		return Order{}, err
	}
	if err := s.work(ctx, p); err != nil {
		return Order{}, err
	}
	// Write the stock we computed, and the order, in one transaction. If the
	// lock is lost meanwhile, ctx rolls the transaction back; what no lock
	// can close is a commit already on its way when the lease runs out (the
	// late-commit fault): only a fencing token checked by the database can
	// (fence.go).
	o := newOrder(p, req)
	err = s.commit(ctx, lock, p, func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE products SET stock = ? WHERE id = ?", left-req.Quantity, p.ID).Error; err != nil {
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

// landedDespiteLock is landedAfterAll for a holder whose transaction ran
// on its lock's context, lockCtx: that context ends when the lock is lost,
// which may be while the COMMIT is on the wire, and the caller still waits
// for its answer. So the database is asked on a context of its own, for at
// most releaseTimeout: an order that committed is the buyer's, lock or no
// lock, and must not be answered lock_lost. (A cold review found it could
// be.) When the caller's own context ended, nobody waits, and nothing is
// asked.
func (s *Service) landedDespiteLock(lockCtx context.Context, o Order, err error) bool {
	if lockCtx.Err() != nil && !errors.Is(context.Cause(lockCtx), dlock.ErrNotHeld) {
		return false // the caller gave up: nobody waits for the answer
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(lockCtx), releaseTimeout)
	defer cancel()
	return s.landedAfterAll(ctx, o, err)
}

// landedAfterAll reports whether o, whose transaction failed with err, is
// in the database after all: a COMMIT that landed and whose answer was
// lost. It asks only when err leaves that open (not for a refusal the
// transaction rolled back for) and someone still waits for the answer (ctx
// has not ended), and says no if the database cannot tell.
func (s *Service) landedAfterAll(ctx context.Context, o Order, err error) bool {
	switch {
	case ctx.Err() != nil:
		return false
	case errors.Is(err, ErrSoldOut), errors.Is(err, ErrDuplicateOrder),
		errors.Is(err, errNoUnits), errors.Is(err, errStaleFence):
		return false
	}
	found, qerr := s.landed(ctx, o.ID)
	return qerr == nil && found
}

// check is the read-check of the read-check-write, through q (the database,
// or a transaction): it reads the stock and refuses a buyer who already has
// an order (ErrDuplicateOrder) or asks for more than is left (ErrSoldOut).
// It returns the stock it read.
func (s *Service) check(ctx context.Context, q *gorm.DB, p stock.Product, req Request) (int, error) {
	left, err := readStock(ctx, q, p.ID)
	if err != nil {
		return 0, err
	}
	if left == 0 {
		s.markSoldOut(p.ID)
	}
	// One order per buyer and product.
	n, err := countOrders(ctx, q, p.ID, req.UserID)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		return 0, fmt.Errorf("%w: user %q already bought %q", ErrDuplicateOrder, req.UserID, p.ID)
	}
	if left < req.Quantity {
		return 0, fmt.Errorf("%w: %q has %d left, asked for %d", ErrSoldOut, p.ID, left, req.Quantity)
	}
	return left, nil
}

// readStock reads the stock of product id with a plain SELECT through q.
func readStock(ctx context.Context, q *gorm.DB, id string) (int, error) {
	var left int
	err := q.WithContext(ctx).Raw("SELECT stock FROM products WHERE id = ?", id).Row().Scan(&left)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: product %q", stock.ErrNotFound, id)
	}
	return left, err
}

// countOrders counts the orders user has for product through q (the index
// orders_product_user answers it).
func countOrders(ctx context.Context, q *gorm.DB, product, user string) (int64, error) {
	var n int64
	err := q.WithContext(ctx).
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
