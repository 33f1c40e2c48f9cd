package order

import (
	"context"
	"errors"
	"fmt"

	"github.com/flashsale/flashsale/internal/queue"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeQueued is strategy redis-queue: peak shaving. One Redis script
// (package queue) checks the buyer, takes the units and appends the order
// to the product's stream, at once; the buyer is told "accepted" (202)
// with the order's id, and the consumers of every shop write the queued
// orders to the database in batches behind it (WriteQueued). The crowd
// meets Redis only; the database sees one transaction per batch, at the
// pace the consumers set.
//
// The script checks the buyer before it takes a unit, never after, as
// redis-decr's does. The database keeps its own guards (the conditional
// UPDATE, one order per buyer): an order Redis accepted that the database
// cannot take is refused for good, its units given back, and polling it
// says so.
func (s *Service) placeQueued(ctx context.Context, p stock.Product, req Request) (Order, error) {
	if s.opts.Queue == nil {
		return Order{}, fmt.Errorf("order: strategy %s needs Options.Queue", p.Strategy)
	}
	// 1. Take the units and queue the order, in one script. The business
	// work is the consumer's, once per batch (WriteQueued): the buyer
	// waits for Redis only.
	o := newOrder(p, req)
	_, err := s.accept(ctx, o)
	if errors.Is(err, queue.ErrNotLoaded) {
		// 1b. Redis has no stock for p: load the database's, once.
		left, rerr := readStock(ctx, s.db, p.ID)
		if rerr != nil {
			return Order{}, fromWrite(ctx, rerr)
		}
		if _, lerr := s.opts.Queue.LoadIfMissing(ctx, p.ID, left); lerr != nil {
			err = lerr
		} else {
			_, err = s.accept(ctx, o)
		}
	}
	var dup *queue.DuplicateError
	switch {
	case err == nil:
		o.Queued = true
		return o, nil
	case errors.Is(err, queue.ErrBusy):
		return Order{}, fmt.Errorf("%w: %w", ErrBusy, err)
	case errors.Is(err, queue.ErrSoldOut):
		return Order{}, fmt.Errorf("%w: %w", ErrSoldOut, err)
	case errors.As(err, &dup):
		return Order{}, &DuplicateOrderError{OrderID: dup.Order, UserID: o.UserID, ProductID: p.ID}
	case ctx.Err() != nil:
		return Order{}, fmt.Errorf("order: queue: %w: %w", ctx.Err(), err)
	}
	// Redis did not answer after the script was sent: it may have run,
	// and the order be queued. The buyer's retry finds out (a duplicate
	// naming this order, or a new one).
	return Order{}, fmt.Errorf("%w: queue: %w", ErrInDoubt, err)
}

// accept is one Accept of o, which waits at most the lock wait for its
// round trip: redis-queue's orders go past the shop's door
// (QueuesInside), and this is what bounds their queue.
func (s *Service) accept(ctx context.Context, o Order) (int, error) {
	return s.opts.Queue.AcceptWithin(ctx, queue.Order{
		ID: o.ID, UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity, CreatedAt: o.CreatedAt,
	}, s.opts.LockWait)
}
