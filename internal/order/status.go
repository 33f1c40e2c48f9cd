package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The statuses OrderStatus reports.
const (
	StatusQueued  = redisqueue.StatusQueued  // accepted, not yet written
	StatusCreated = "created"                // written: the order exists
	StatusRefused = redisqueue.StatusRefused // the database refused it for good
)

// OrderStatus is where one order stands.
type OrderStatus struct {
	ID        string
	ProductID string
	// Status is StatusQueued, StatusCreated or StatusRefused.
	Status string
	// Order is the order as written, for StatusCreated.
	Order Order
	// State is where a written order stands in its life (package life:
	// pending, paid, expired, cancelled), and Deadline, while it is
	// pending, when it expires by the database's clock.
	State    life.State
	Deadline time.Time
	// Code and Reason say why, for StatusRefused: Code one of the error
	// codes (sold_out, not_found, duplicate_order), Reason a sentence.
	Code, Reason string
}

// OrderStatus returns where order id stands: queued or refused, as Redis
// says while it knows the order (redis-queue), or created once the database
// has it. Any shop answers for any order, and starts the consumer of a
// queued order's product. Safe for concurrent use.
//
// Errors: a *FieldError wrapping ErrInvalid for a malformed id;
// ErrUnknownOrder (wraps stock.ErrNotFound); ErrUnavailable.
func (s *Service) OrderStatus(ctx context.Context, id string) (OrderStatus, error) {
	if err := checkID("order_id", id); err != nil {
		return OrderStatus{}, err
	}
	// 1. Redis, while the order is queued or refused.
	var redisErr error
	if s.redisQueue != nil {
		st, err := s.redisQueue.Status(ctx, id)
		if err == nil {
			return OrderStatus{ID: id, ProductID: st.ProductID, Status: st.Status, Code: st.Code, Reason: st.Reason}, nil
		}
		// Unknown to Redis, or Redis down: the database may know.
		if !errors.Is(err, stock.ErrUnknownOrder) {
			redisErr = err
		}
	}
	// 2. The database, once written.
	var r orderdb.Row
	var deadline *int64
	err := s.db.WithContext(ctx).Raw(
		"SELECT id, user_id, product_id, quantity, strategy, created_at, state, deadline_ms FROM orders WHERE id = ?", id).
		Row().Scan(&r.ID, &r.UserID, &r.ProductID, &r.Quantity, &r.Strategy, &r.CreatedAt, &r.State, &deadline)
	switch {
	case errors.Is(err, sql.ErrNoRows) && redisErr != nil:
		// Redis, which knows the orders not yet written, did not answer.
		return OrderStatus{}, fmt.Errorf("%w: order %q: %w", ErrUnavailable, id, redisErr)
	case errors.Is(err, sql.ErrNoRows):
		return OrderStatus{}, fmt.Errorf("%w %q", ErrUnknownOrder, id)
	case err != nil:
		return OrderStatus{}, orderdb.FromWrite(ctx, err)
	}
	o := Order{ID: r.ID, UserID: r.UserID, ProductID: r.ProductID, Quantity: r.Quantity,
		Strategy: strategy.Name(r.Strategy), CreatedAt: r.CreatedAt.UTC()}
	st := OrderStatus{ID: id, ProductID: o.ProductID, Status: StatusCreated, Order: o, State: life.State(r.State)}
	if deadline != nil && st.State == life.Pending {
		st.Deadline = time.UnixMilli(*deadline).UTC()
	}
	return st, nil
}
