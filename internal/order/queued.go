package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
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
// The script checks the buyer before it takes a unit, never after (as
// redis-decr's script does too). The database keeps its own guards (the conditional
// UPDATE, one order per buyer): an order Redis accepted that the database
// cannot take is refused for good: the consumer dead-letters it, and
// queue's refused.lua gives its units back to the Redis stock and sets its
// status (queue/ack.go), which polling it reports.
func (s *Service) placeQueued(ctx context.Context, p stock.Product, req Request) (Order, error) {
	if s.opts.Queue == nil {
		return Order{}, fmt.Errorf("order: strategy %s needs Options.Queue", p.Strategy)
	}
	// 1. Take the units and queue the order, in one script. The business
	// work is the consumer's, once per batch (WriteQueued): the buyer
	// waits for Redis only, and for its turn to be sent at most the lock
	// wait, whatever step 1b costs.
	o := s.newOrder(p, req)
	sendBy := time.Now().Add(s.opts.LockWait)
	_, err := s.accept(ctx, o, sendBy)
	if errors.Is(err, stock.ErrNotLoaded) {
		// 1b. Redis has no stock for p: load the database's, once.
		if lerr := s.loadQueued(ctx, p.ID); lerr != nil {
			return Order{}, lerr // nothing was sent
		}
		_, err = s.accept(ctx, o, sendBy)
	}
	var dup *queue.DuplicateError
	switch {
	case err == nil:
		o.Queued = true
		return o, nil
	case errors.Is(err, ErrBusy), errors.Is(err, ErrSoldOut):
		return Order{}, err
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

// accept is one Accept of o, sent by sendBy or not at all (ErrBusy):
// redis-queue's orders go past the shop's door (HasOwnQueue), and this
// is what bounds their queue.
func (s *Service) accept(ctx context.Context, o Order, sendBy time.Time) (int, error) {
	return s.opts.Queue.AcceptBy(ctx, queue.Order{
		ID: o.ID, UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity, CreatedAt: o.CreatedAt,
	}, sendBy)
}

// loadQueued sets product's stock in Redis to the database's if Redis has
// none (it restarted empty, or failed over to a replica that had not got
// the key), with the returns that stock counts and Redis is owed
// (orderdb.OwedIDs, in the same snapshot), so that none is paid twice. The buyers that find it missing are past the shop's door, so
// one of them at a time per product reads the database and loads; the
// others wait for that load (or for their ctx) and then accept again. The
// load runs on a context of its own, bounded by the lock wait, since
// buyers besides the one who started it wait for it. Errors: the
// database's (as a write's), ErrUnavailable for Redis's, or one wrapping
// ctx.Err().
func (s *Service) loadQueued(ctx context.Context, product string) error {
	loaded := s.queueLoads.DoChan(product, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.LockWait)
		defer cancel()
		var left int
		var owed []string
		err := orderdb.Snapshot(lctx, s.db, func(tx *gorm.DB) (err error) {
			if left, err = orderdb.ReadStock(lctx, tx, product); err != nil {
				return err
			}
			owed, err = orderdb.OwedIDs(tx, product, nil)
			return err
		})
		if err != nil {
			return nil, orderdb.FromWrite(lctx, err)
		}
		if _, err := s.opts.Queue.LoadIfMissing(lctx, product, left, owed...); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
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
