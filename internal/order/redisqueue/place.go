package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// An order's two ends in this shop: Place takes its units and queues it
// (the buyer is told 202), and WriteQueued writes its row, in a batch the
// consumers (consumer.go) read from the stream. A shop that dies in
// between loses nothing while Redis keeps its data: its entries stay
// pending in the consumer group until a live consumer claims them
// (XAUTOCLAIM), and a batch written twice is written once (by order id).

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

// WriteQueued writes a batch of queued orders of product, for the
// consumers (it is their Writer): the business work once per batch, outside
// the transaction, then one transaction, its steps below. Orders are
// allocated in stream order (SellerOptions.Allocate); one the stock cannot
// cover (sold_out: the database has fewer units than Redis thought) or
// whose buyer has another order (duplicate_order) is refused, and all of a
// deleted product's (not_found). Only inserted orders count toward the
// stock, so a batch delivered twice, even to two consumers at once, is
// written once: the second waits for the first's row lock, then finds its
// orders. It returns one refusal per order (nil: written, now or before)
// and the stock left; an error means nothing was written. Safe for
// concurrent use.
func (s *Seller) WriteQueued(ctx context.Context, product string, orders []Order) ([]*Refusal, int, error) {
	p, perr := s.opts.Product(ctx, product)
	if perr == nil {
		if err := s.opts.Work(ctx, p); err != nil {
			return nil, 0, fmt.Errorf("order: %w", err)
		}
		s.opts.Asked(p)
	} // (a product the database no longer has is refused below)
	var refusals []*Refusal
	left := 0
	err := s.w.Commit(ctx, nil, stock.Product{ID: product}, func(tx *gorm.DB) error {
		refusals, left = make([]*Refusal, len(orders)), 0 // again after a deadlock
		// 1. Take the product's row (a no-op UPDATE: MySQL's row lock and
		// SQLite's write lock alike): every shop's consumers write this
		// product's batches one after the other.
		if err := orderdb.TakeRow(tx, product); err != nil {
			return err
		}
		// 2. Read its stock, and which of the batch's buyers have an order:
		// an order whose id is there was written before (a consumer died
		// between its commit and its acknowledgement) and is skipped.
		sales := make([]orderdb.Order, len(orders))
		users := make([]string, len(orders))
		for i, o := range orders {
			sales[i] = orderdb.Order{ID: o.ID, UserID: o.UserID, ProductID: product,
				Quantity: o.Quantity, Strategy: strategy.RedisQueue, CreatedAt: o.CreatedAt, PayWithin: p.PayWithin}
			users[i] = o.UserID
		}
		written, err := writtenAmong(tx, p, orders)
		if err != nil {
			return err
		}
		onShelf, err := orderdb.ReadStock(ctx, tx, product)
		if errors.Is(err, stock.ErrNotFound) {
			for i := range refusals {
				refusals[i] = &Refusal{Code: s.opts.Code(err), Reason: fmt.Sprintf("product %q no longer exists", product)}
			}
			return nil
		}
		if err != nil {
			return err
		}
		bought, err := orderdb.Bought(ctx, tx, product, users)
		if err != nil {
			return err
		}
		// 3. Allocate in stream order.
		var rows []orderdb.Row
		left = onShelf
		for i, o := range sales {
			if id, has := bought[o.UserID]; (has && id == o.ID) || written[o.ID] {
				continue // written before (and since ended, for written)
			}
			n, err := s.opts.Allocate(o, left, bought)
			if err != nil {
				refusals[i] = s.refusal(err, left, o.Quantity)
				continue
			}
			left = n
			rows = append(rows, orderdb.UniqueRowOf(o))
		}
		total := onShelf - left
		if len(rows) == 0 {
			return nil
		}
		// 4. One conditional update for the batch's total, one INSERT that
		// does nothing for an id already there; it must insert every row
		// allocated, or the transaction rolls back.
		res := tx.Exec(orderdb.TakeUnits, total, product, total)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("order: queued batch of %q: the stock changed under the row lock", product)
		}
		ins := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoNothing: true}).Create(&rows)
		if ins.Error != nil {
			return ins.Error
		}
		if ins.RowsAffected != int64(len(rows)) {
			return fmt.Errorf("order: queued batch of %q: inserted %d of %d orders", product, ins.RowsAffected, len(rows))
		}
		// 5. With a pay window, the deadlines, by the database's clock.
		return stampPending(tx, p, rows)
	})
	if err != nil {
		return nil, 0, orderdb.FromWrite(ctx, err)
	}
	if left == 0 {
		s.opts.SoldOut(product)
	}
	return refusals, left, nil
}

// refusal is the refusal of a queued order that allocate refused
// with err, when the database had left units: the buyer has another
// order, or too few units are left.
func (s *Seller) refusal(err error, left, quantity int) *Refusal {
	reason := fmt.Sprintf("the database has %d units left, the order asked for %d", left, quantity)
	var dup *orderdb.DuplicateOrderError
	if errors.As(err, &dup) {
		reason = fmt.Sprintf("the buyer already has order %s", dup.OrderID)
	}
	return &Refusal{Code: s.opts.Code(err), Reason: reason}
}

// writtenAmong returns which of orders of p the database has already, for
// a product with a pay window: an order written and since ended is no
// longer its buyer's live order, and must not be written again. Without a
// pay window the buyers' read finds every order: nil.
func writtenAmong(tx *gorm.DB, p stock.Product, orders []Order) (map[string]bool, error) {
	if p.PayWithin <= 0 {
		return nil, nil
	}
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	return orderdb.Written(tx, ids)
}

// stampPending has the database stamp the deadlines of rows, just
// inserted in tx, if p has a pay window (life.Stamp): they are pending.
func stampPending(tx *gorm.DB, p stock.Product, rows []orderdb.Row) error {
	if p.PayWithin <= 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return life.Stamp(tx, p.PayWithin, ids)
}
