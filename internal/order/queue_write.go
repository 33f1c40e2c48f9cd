package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/flashsale/flashsale/internal/queue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// WriteQueued writes a batch of queued orders of product (strategy
// redis-queue) to the database, for the queue's consumers. First the
// business work (the product's work_ms, and its stall), once per batch
// and outside the transaction, as a batched strategy does it once per
// batch; then the batch's one transaction:
//
//  1. take the product's row (a no-op UPDATE: MySQL's row lock and
//     SQLite's write lock alike), so that the consumers of every shop
//     write this product's batches one after the other, and read its
//     stock; no row: the product was deleted, and every order is refused
//     (not_found);
//
//  2. ask which of the batch's buyers have an order already: an order
//     whose id is there was written before (a redelivered entry: a
//     consumer died between its commit and its acknowledgement) and is
//     skipped; a buyer with another order is refused (duplicate_order);
//
//  3. allocate the rest in stream order, while the stock lasts; an order
//     the stock cannot cover is refused (sold_out: the database has fewer
//     units than Redis thought);
//
//  4. one conditional UPDATE for the total of the orders allocated,
//
//     UPDATE products SET stock = stock - total WHERE id = ? AND stock >= total
//
//     and one multi-row INSERT of them, which does nothing for an id
//     already there (ON CONFLICT DO NOTHING, or MySQL's ON DUPLICATE KEY
//     UPDATE id = id); the rows it inserted must be every one allocated,
//     or the transaction rolls back and the error says so.
//
// Only the orders inserted count toward the stock, so a batch delivered
// twice, even to two consumers at once, is written once: the second waits
// for the first's row lock and then finds its orders there.
//
// It returns one refusal per order (nil: written, now or before) and the
// stock left after the commit. An error means nothing was written: the
// entries stay pending. Safe for concurrent use.
func (s *Service) WriteQueued(ctx context.Context, product string, orders []queue.Order) ([]*queue.Refusal, int, error) {
	if p, err := s.product(ctx, product); err == nil {
		if err := s.work(ctx, p); err != nil {
			return nil, 0, fmt.Errorf("order: %w", err)
		}
	} // (a product the database no longer has is refused below)
	var refusals []*queue.Refusal
	left := 0
	err := s.commit(ctx, nil, stock.Product{ID: product}, func(tx *gorm.DB) error {
		refusals = make([]*queue.Refusal, len(orders)) // again after a deadlock
		// 1. Take the product's row, then read its stock.
		if err := tx.Exec("UPDATE products SET stock = stock WHERE id = ?", product).Error; err != nil {
			return err
		}
		var err error
		left, err = readStock(ctx, tx, product)
		if errors.Is(err, stock.ErrNotFound) {
			for i := range refusals {
				refusals[i] = &queue.Refusal{Code: "not_found", Reason: fmt.Sprintf("product %q no longer exists", product)}
			}
			return nil
		}
		if err != nil {
			return err
		}
		// 2. Who has an order already.
		bought, err := s.buyersOf(ctx, tx, product, orders)
		if err != nil {
			return err
		}
		// 3. Allocate in stream order.
		var rows []orderRow
		total := 0
		for i, o := range orders {
			id, has := bought[o.UserID]
			switch {
			case has && id == o.ID:
				continue // written before
			case has:
				refusals[i] = &queue.Refusal{Code: "duplicate_order", Reason: fmt.Sprintf("the buyer already has order %s", id)}
				continue
			case left-total < o.Quantity:
				refusals[i] = &queue.Refusal{Code: "sold_out",
					Reason: fmt.Sprintf("the database has %d units left, the order asked for %d", left-total, o.Quantity)}
				continue
			}
			bought[o.UserID] = o.ID
			total += o.Quantity
			rows = append(rows, toUniqueRow(Order{ID: o.ID, UserID: o.UserID, ProductID: product,
				Quantity: o.Quantity, Strategy: strategy.RedisQueue, CreatedAt: o.CreatedAt}))
		}
		if len(rows) == 0 {
			return nil
		}
		// 4. One conditional update for the batch's total, one INSERT.
		res := tx.Exec(takeUnits, total, product, total)
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
		left -= total
		return nil
	})
	if err != nil {
		return nil, 0, fromWrite(ctx, err)
	}
	if left == 0 {
		s.markSoldOut(product)
	}
	return refusals, left, nil
}

// buyersOf returns, for the buyers of orders, the id of an order each has
// for product, read through tx.
func (s *Service) buyersOf(ctx context.Context, tx *gorm.DB, product string, orders []queue.Order) (map[string]string, error) {
	users := make([]string, len(orders))
	for i, o := range orders {
		users[i] = o.UserID
	}
	var rows []struct{ UserID, ID string }
	err := tx.WithContext(ctx).
		Raw("SELECT user_id, id FROM orders WHERE product_id = ? AND user_id IN ?", product, users).
		Scan(&rows).Error
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	bought := make(map[string]string, len(rows))
	for _, r := range rows {
		bought[r.UserID] = r.ID
	}
	return bought, nil
}
