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

// sell sells units holding p's product lock, to one buyer or a batch (reqs,
// in arrival order), in one transaction on ctx, the lock's context. read is
// the shelf if the caller read it and worked before the transaction (buy).
// Buyers for whom claim(i) is false gave up and are skipped (claim nil:
// none). It returns one answer per buyer, or the sale's error, and then
// nothing was written unless it is in doubt (orderdb.Writer.AfterFailure).
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
		// 4. Write the stock we computed (writeStock, locked.go: it checks
		// the fence again), and the orders in one multi-row INSERT.
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

// allocate decides who gets units in the flows that decide in Go: the
// locked flow and the batch (sell), redis-queue's writer
// (SellerOptions.Allocate) and the database's locks (forupdate.go,
// version.go). sql-atomic, sql-one-trip and redis-decr never call it; they
// apply refuse's rule in SQL or Lua. It gives o to its buyer from left
// units unless refuse refuses, records the buyer in bought, and returns
// the units left. Each caller writes the result with its own SQL.
func allocate(o Order, left int, bought map[string]string) (int, error) {
	req := Request{UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity}
	if err := refuse(req, left, bought); err != nil {
		return left, err
	}
	bought[o.UserID] = o.ID
	return left - o.Quantity, nil
}

// refuse is the rule of who may buy, in Go (allocate, and buy's check
// before the work): a buyer already in bought is a duplicate, one who asks
// for more than left is told sold out. The flows that never call it keep
// the same rule where they decide: sql-atomic and sql-one-trip in the
// database (unique key, conditional UPDATE), redis-decr and redis-queue in
// their scripts (take.lua, accept.lua). Ids compare as bytes here, in the
// database (bytewise columns) and in Redis.
func refuse(req Request, left int, bought map[string]string) error {
	if id, ok := bought[req.UserID]; ok {
		return &DuplicateOrderError{OrderID: id, UserID: req.UserID, ProductID: req.ProductID}
	}
	if left < req.Quantity {
		return fmt.Errorf("%w: %q has %d left, asked for %d", ErrSoldOut, req.ProductID, left, req.Quantity)
	}
	return nil
}

// look reads product's shelf for users through q (the database or a
// transaction): the stock with a plain SELECT, then shelfOf. An unknown
// product is stock.ErrNotFound.
func (s *Service) look(ctx context.Context, q *gorm.DB, product string, users []string) (shelf, error) {
	left, err := orderdb.ReadStock(ctx, q, product)
	if err != nil {
		return shelf{}, err
	}
	return s.shelfOf(ctx, q, product, left, users)
}

// shelfOf is the rest of look, for a stock read already: it remembers a
// stock of 0 (markSoldOut, so the rest of the rush is answered at once) and
// reads who of users has bought product through q (orderdb.Bought).
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
