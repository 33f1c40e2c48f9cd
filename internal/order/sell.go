package order

import (
	"context"
	"fmt"
	"maps"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// shelf is what a seller holding the product lock knows before it
// allocates: the units left, and which buyers already have an order (each
// with the id of one of their orders).
type shelf struct {
	left   int
	bought map[string]string
}

// answer is what one buyer of a sale is told: its order, or why not.
type answer struct {
	order Order
	err   error
}

// sell is the transaction around allocate for the lock strategies: it
// sells units holding p's product lock, for one buyer or a batch of them
// (reqs, in arrival order), in one transaction on ctx, the lock's
// context, its steps below. The caller may have read the shelf and done
// the business work before the transaction (read; see buy).
//
// A buyer for whom claim(i) is false has given up before it was allocated
// and is skipped (claim nil: nobody gives up). It returns one answer per
// buyer, or an error when the sale failed, and then nothing was written
// unless the error says it is in doubt (orderdb.Writer.AfterFailure).
func (s *Service) sell(ctx context.Context, lock *dlock.Lock, p stock.Product, reqs []Request,
	claim func(i int) bool, read *shelf) ([]answer, error) {
	answers := make([]answer, len(reqs))
	f := fenceOf(lock)
	var sold []Order
	row := s.writer.RowHold() // off's hold: its lock holds nothing
	err := s.writer.Commit(ctx, lock, p, func(tx *gorm.DB) error {
		sold = sold[:0] // commit may run this again after a deadlock
		row.Began()
		// 1. Register the fence, if the lock has one, before anything is
		// read (locked_fence.go says why): no older holder can commit after this.
		if err := s.registerFence(ctx, tx, p, f); err != nil {
			return err
		}
		// 2. Read, now that no older holder can still commit, and work.
		sh := read
		if sh == nil {
			got, err := s.look(ctx, tx, p.ID, usersOf(reqs))
			if err != nil {
				return err
			}
			if err := s.work(ctx, p); err != nil {
				return err
			}
			sh = &got
		}
		// 3. Allocate, in arrival order: a duplicate if the buyer has
		// bought, sold out if too few units are left, else a new order.
		left, bought := sh.left, maps.Clone(sh.bought)
		for i, r := range reqs {
			if claim != nil && !claim(i) {
				answers[i] = answer{err: errWithdrawn} // nobody reads it
				continue
			}
			o := s.newOrder(p, r)
			n, err := allocate(o, left, bought)
			if err != nil {
				answers[i] = answer{err: err}
				continue
			}
			answers[i], left = answer{order: o}, n
			sold = append(sold, o)
		}
		if len(sold) == 0 {
			return nil // commit all the same: a registered fence stays
		}
		// 4. Write the stock we computed (checking the fence again), and
		// the orders in one multi-row INSERT.
		if err := s.writeStock(ctx, tx, p, left, f); err != nil {
			return err
		}
		row.Took()
		rows := make([]orderdb.Row, len(sold))
		for i, o := range sold {
			rows[i] = orderdb.RowOf(o)
		}
		return orderdb.InsertRows(tx, rows)
	})
	if p.Strategy == strategy.Off {
		s.rowHeld(p, row)
	}
	if err != nil && len(sold) > 0 {
		err = s.writer.AfterFailure(ctx, sold[0], err)
	}
	if err != nil {
		return nil, err
	}
	return answers, nil
}

// allocate is the one step that decides who gets units, for the locked flow, the
// batch (sell), redis-queue's writer (redisqueue.Seller.WriteQueued, as
// its SellerOptions.Allocate) and the database's own locks (forupdate.go,
// version.go): it gives o to its buyer from left units, unless refuse refuses it, and returns the units
// left after it. Each caller then writes the result with its own SQL:
// sell's writeStock, forupdate's and version's UPDATEs write the count
// left; the queue writer's TakeUnits takes the batch's total units with
// one conditional UPDATE. A buyer who gets o is recorded in bought.
func allocate(o Order, left int, bought map[string]string) (int, error) {
	req := Request{UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity}
	if err := refuse(req, left, bought); err != nil {
		return left, err
	}
	bought[o.UserID] = o.ID
	return left - o.Quantity, nil
}

// refuse is the one rule of who may buy: a buyer who has an order for the
// product (in bought) is a duplicate, and one who asks for more than left
// is told sold out. The flows that never call it keep the same rule where
// they decide: sql-atomic in the database (the unique key
// orders_unique_buyer and the conditional UPDATE, orderdb.InsertAndTake),
// sql-one-trip in its stored procedure (the same two, in one call),
// redis-decr and redis-queue in their Redis scripts (take.lua, accept.lua).
// Ids are compared as bytes, here as in the database
// (migrations make every id column bytewise) and in Redis.
func refuse(req Request, left int, bought map[string]string) error {
	if id, ok := bought[req.UserID]; ok {
		return &DuplicateOrderError{OrderID: id, UserID: req.UserID, ProductID: req.ProductID}
	}
	if left < req.Quantity {
		return fmt.Errorf("%w: %q has %d left, asked for %d", ErrSoldOut, req.ProductID, left, req.Quantity)
	}
	return nil
}

// look reads product's shelf for users, the buyers of a sale, through q
// (the database, or a transaction): the stock with a plain SELECT, and
// who of them has bought, in one query each. A stock of 0 is remembered
// (markSoldOut): without a pay window stock never goes up, so the rest of
// the rush can be answered at once.
// A product the database does not have is stock.ErrNotFound.
func (s *Service) look(ctx context.Context, q *gorm.DB, product string, users []string) (shelf, error) {
	left, err := orderdb.ReadStock(ctx, q, product)
	if err != nil {
		return shelf{}, err
	}
	return s.shelfOf(ctx, q, product, left, users)
}

// shelfOf is the rest of look, for a stock read already (for update, or
// with its version): it remembers a stock of 0, and reads who of users has
// bought product through q (orderdb.Bought).
func (s *Service) shelfOf(ctx context.Context, q *gorm.DB, product string, left int, users []string) (shelf, error) {
	if left == 0 {
		s.markSoldOut(product)
	}
	bought, err := orderdb.Bought(ctx, q, product, users)
	if err != nil {
		return shelf{}, err
	}
	return shelf{left: left, bought: bought}, nil
}

// usersOf returns the buyers of reqs.
func usersOf(reqs []Request) []string {
	users := make([]string, len(reqs))
	for i, r := range reqs {
		users[i] = r.UserID
	}
	return users
}
