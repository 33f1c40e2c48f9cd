package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// Place is strategy redis-queue: one script (Queue.AcceptBy) checks the
// buyer before it takes a unit, takes the units and queues order o of p,
// and the buyer is told 202. The database keeps its own guards; an order
// it refuses is dead-lettered by the consumer (ack.go).
//
// It returns nil once o is queued. Errors: stock.ErrBusy (not sent within
// the lock wait); stock.ErrSoldOut; a *orderdb.DuplicateOrderError; load's;
// one wrapping ctx.Err(); orderdb.ErrInDoubt when Redis did not answer
// after the script was sent.
func (s *Seller) Place(ctx context.Context, p stock.Product, o orderdb.Order) error {
	// 1. Take the units and queue the order, in one script; the business work
	// is the consumer's (WriteQueued). The buyer waits for its turn to be sent
	// at most the lock wait, whatever step 1b costs.
	sendBy := time.Now().Add(s.opts.LockWait)
	_, err := s.accept(ctx, o, sendBy)
	if errors.Is(err, stock.ErrNotLoaded) {
		// 1b. Redis has no stock for p: load the database's, once.
		if lerr := s.load(ctx, p.ID); lerr != nil {
			return lerr // nothing was sent
		}
		_, err = s.accept(ctx, o, sendBy)
	}
	var dup *DuplicateError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, stock.ErrBusy), errors.Is(err, stock.ErrSoldOut):
		return err
	case errors.As(err, &dup):
		return &orderdb.DuplicateOrderError{OrderID: dup.Order, UserID: o.UserID, ProductID: p.ID}
	case ctx.Err() != nil:
		return fmt.Errorf("order: queue: %w: %w", ctx.Err(), err)
	}
	// Redis did not answer after the script was sent: it may have run,
	// and the order be queued. The buyer's retry finds out (a duplicate
	// naming this order, or a new one).
	return fmt.Errorf("%w: queue: %w", orderdb.ErrInDoubt, err)
}

// accept is one AcceptBy of o, sent by sendBy or not at all (stock.ErrBusy):
// redis-queue's orders go past the shop's door (package order's
// HasOwnQueue), and this is what bounds their queue.
func (s *Seller) accept(ctx context.Context, o orderdb.Order, sendBy time.Time) (int, error) {
	return s.q.AcceptBy(ctx, Order{
		ID: o.ID, UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity, CreatedAt: o.CreatedAt,
	}, sendBy)
}

// Load sets product's stock in Redis to units and starts its consumer in
// this shop, for a product just created. Errors: Queue.Load's.
func (s *Seller) Load(ctx context.Context, product string, units int) error {
	defer s.consumers.KeepConsuming(product)
	return s.q.Load(ctx, product, units)
}

// load sets product's Redis stock to the database's if Redis has none (it
// restarted empty, or failed over), marking the returns that stock counts
// and Redis is owed (orderdb.OwedIDs, same snapshot) so none is paid twice.
// One buyer per product loads, on a context of its own bounded by the lock
// wait; the others wait for it. Errors: the database's, stock.ErrUnavailable,
// or one wrapping ctx.Err().
func (s *Seller) load(ctx context.Context, product string) error {
	loaded := s.loads.DoChan(product, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.LockWait)
		defer cancel()
		var left int
		var owed []string
		err := orderdb.Snapshot(lctx, s.w.DB(), func(tx *gorm.DB) (err error) {
			if left, err = orderdb.ReadStock(lctx, tx, product); err != nil {
				return err
			}
			owed, err = orderdb.OwedIDs(tx, product, nil)
			return err
		})
		if err != nil {
			return nil, orderdb.FromWrite(lctx, err)
		}
		if _, err := s.q.stock.LoadIfMissing(lctx, product, left, owed...); err != nil {
			return nil, fmt.Errorf("%w: %w", stock.ErrUnavailable, err)
		}
		return nil, nil
	})
	select {
	case r := <-loaded:
		return r.Err
	case <-ctx.Done():
		return fmt.Errorf("order: loading the stock of %q into redis: %w", product, ctx.Err())
	}
}
