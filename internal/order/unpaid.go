package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// The errors of an order's life after it is written (package life's).
var (
	ErrExpired     = life.ErrExpired     // paid, or cancelled, after its deadline
	ErrAlreadyPaid = life.ErrAlreadyPaid // cancelled after it was paid
	ErrCancelled   = life.ErrCancelled   // paid after its buyer cancelled it
)

// Pay pays order id, if it is pending and its deadline has not passed by
// the database's clock (life.Pay): one compare-and-set, and no stock
// moves. A paid order, and an order of a product without a pay window,
// answers as paid, every time.
//
// Errors: a *FieldError wrapping ErrInvalid for a malformed id;
// ErrUnknownOrder; ErrExpired; ErrCancelled; ErrUnavailable when the
// database cannot be reached. Safe for concurrent use.
func (s *Service) Pay(ctx context.Context, id string) (OrderStatus, error) {
	if err := checkID("order_id", id); err != nil {
		return OrderStatus{}, err
	}
	o, paid, err := life.Pay(ctx, s.db, id)
	if err != nil {
		return OrderStatus{}, s.fromLife(ctx, err)
	}
	if p, err := s.product(ctx, o.ProductID); err == nil && paid {
		s.happened(p.ID, p.Strategy, EventPaid)
	}
	return s.OrderStatus(ctx, id)
}

// Cancel cancels order id for its buyer, if it is pending, and gives its
// units back in the transaction that ends it (giveBack): once, however many
// cancels and sweeps race. A repeated cancel answers as the first did; a
// cancel past the deadline (by the database's clock) expires the order and
// answers ErrExpired.
//
// Errors: a *FieldError wrapping ErrInvalid for a malformed id;
// ErrUnknownOrder; ErrAlreadyPaid; ErrExpired; ErrLockTimeout or
// ErrLockLost; ErrUnavailable; or the database's. A retry after any error
// is safe. Safe for concurrent use.
func (s *Service) Cancel(ctx context.Context, id string) (OrderStatus, error) {
	if err := checkID("order_id", id); err != nil {
		return OrderStatus{}, err
	}
	o, err := life.Get(ctx, s.db, id)
	if err != nil {
		return OrderStatus{}, s.fromLife(ctx, err)
	}
	p, err := s.product(ctx, o.ProductID)
	if err != nil {
		return OrderStatus{}, err
	}
	s.startSweep(p)
	var ended bool
	err = s.giveBack(ctx, p, func(tx *gorm.DB) error {
		var err error
		o, ended, err = life.End(tx, id, life.Cancelled)
		if err != nil || !ended {
			return err
		}
		return s.give(tx, p, o)
	})
	if err != nil {
		return OrderStatus{}, s.fromLife(ctx, err)
	}
	if ended {
		s.payRedis(ctx, p, []life.Order{o})
		if o.State == life.Expired { // its deadline had passed: expired, as a payment was told
			s.ended(p, o, EventExpired)
			return OrderStatus{}, fmt.Errorf("%w: order %s, deadline %s", ErrExpired, id, o.Deadline.Format("15:04:05.000"))
		}
		s.ended(p, o, EventCancelled)
	}
	return s.OrderStatus(ctx, id)
}

// giveBack runs change, a transaction that ends orders of p and gives their
// units back, taking what a sale of p's strategy takes: a return is a sale
// the other way round. The locking strategies write back a stock read
// before, so a return holds the product lock (and registers its fence
// first), or a sale's write would overwrite it; the others write relative
// to the row, under its lock, or against its version, and need only the
// transaction. Redis strategies record in it what Redis is owed (give); the
// caller pays Redis after the commit (owed.go). Errors: ErrLockTimeout,
// ErrLockLost, ErrFencedOut, change's, or the database's.
func (s *Service) giveBack(ctx context.Context, p stock.Product, change func(tx *gorm.DB) error) (err error) {
	p.LateCommit = 0 // the late-commit fault is the sales'
	if _, locks := p.Strategy.LockMode(); !locks {
		return s.writer.Commit(ctx, nil, p, change)
	}
	lockers, err := s.lockersFor(p.Strategy)
	if err != nil {
		return err
	}
	lock, err := s.lockProduct(ctx, lockers.product, p)
	if err != nil {
		return err
	}
	got := time.Now()
	defer func() { s.releaseProduct(ctx, p, lock, got, err) }()
	err = s.writer.Commit(lock.Context(), lock, p, func(tx *gorm.DB) error {
		if err := s.registerFence(ctx, tx, p, fenceOf(lock)); err != nil {
			return err
		}
		return change(tx)
	})
	if err != nil {
		return s.fromCritical(ctx, lock.Context(), p, err)
	}
	return nil
}

// ended counts order o of p, ended as e (cancelled or expired), and the
// units it gave back.
func (s *Service) ended(p stock.Product, o life.Order, e Event) {
	s.happened(p.ID, p.Strategy, e)
	for range o.Quantity {
		s.happened(p.ID, p.Strategy, EventReturned)
	}
}

// fromLife translates an error of package life, or of the database on
// its behalf, for the caller waiting on ctx.
func (s *Service) fromLife(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrUnknownOrder), errors.Is(err, ErrExpired), errors.Is(err, ErrAlreadyPaid), errors.Is(err, ErrCancelled),
		errors.Is(err, ErrLockTimeout), errors.Is(err, ErrLockLost), errors.Is(err, ErrFencedOut):
		return err
	}
	return orderdb.FromWrite(ctx, err)
}
