package redisdecr

import (
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/sale"
)

// The write of a bucketed product's orders, and how it meets the sweep.
//
// Each order takes its units from its bucket's row of stock_buckets with
// the conditional UPDATE (sale.Take), after its INSERT, as the product's
// own row is taken without buckets. The sweep still decides on the
// product's row (reclaim.go: it takes the row, looks for the orders,
// records the reclaimed ones), so the write takes that row too, after
// its buckets' rows, and then looks in reclaimed for its own ids:
//
//	INSERT INTO orders (..., bucket) VALUES (...)
//	UPDATE stock_buckets SET stock = stock - ? WHERE product_id = ? AND stock >= ? AND bucket = ?
//	UPDATE products SET stock = stock WHERE id = ?                 -- the row the sweep takes
//	SELECT COUNT(*) FROM reclaimed WHERE id IN (...)               -- 0, or roll back
//
// Whoever takes the product's row first wins, as in write.go: a sweep
// that took it first has committed its reclaimed rows before the write's
// SELECT, which is the transaction's first read (its snapshot is taken
// then, on InnoDB) and sees them; a write that took it first makes the
// sweep wait for its commit, and the sweep finds the order. The product's
// row is taken last, after the buckets' (in bucket order), by every
// write, and the sweep takes no bucket's row: no two transactions wait
// for each other in a circle. The product's row stays the one lock of a
// bucketed write that every write takes, for one statement and the
// commit; the group commit (group.go) takes it once per group.
//
// The reclaims count (write.go) is not used here: the SELECT is one
// primary-key lookup per order, on a table that is empty unless a shop
// died, and costs less than the slow path's second UPDATE would.

// takeBuckets takes the units of orders, all of one bucketed product and
// each with its bucket, from their buckets' rows (one UPDATE per bucket),
// unless the sweep reclaimed one of them first. Errors: sale.ErrNoUnits
// when a bucket's row holds fewer than its orders ask for, errReclaimed,
// or the database's.
func takeBuckets(tx *gorm.DB, orders []sale.Order) error {
	product := orders[0].ProductID
	per := map[int]int{}
	ids := make([]string, len(orders))
	for i, o := range orders {
		per[*o.Bucket] += o.Quantity
		ids[i] = o.ID
	}
	buckets := make([]int, 0, len(per))
	for b := range per {
		buckets = append(buckets, b)
	}
	slices.Sort(buckets) // every write takes the rows in one order
	for _, b := range buckets {
		if err := sale.Take(tx, per[b], product, b); err != nil {
			return err
		}
	}
	if err := sale.TakeRow(tx, product); err != nil {
		return err
	}
	var reclaimed int64
	if err := tx.Raw("SELECT COUNT(*) FROM reclaimed WHERE id IN ?", ids).Row().Scan(&reclaimed); err != nil {
		return err
	}
	if reclaimed > 0 {
		return fmt.Errorf("%w: %d of %d orders", errReclaimed, reclaimed, len(orders))
	}
	return nil
}
