package orderdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
)

// The statements on a product's row that more than one strategy runs.

// TakeUnits is the conditional UPDATE with which a lock-free write takes
// its units (sql-atomic, redis-decr, redis-queue's writer): the database
// reads, checks and writes the stock in one statement, under the row's
// lock, so two buyers can never both read n. Zero rows affected: too few
// units. Its arguments: the quantity, the product, the quantity.
const TakeUnits = "UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?"

// takeBucket is TakeUnits on one of a product's stock buckets
// (stock.Product.Buckets): the same statement on the bucket's row, its
// arguments TakeUnits', then the bucket.
const takeBucket = "UPDATE stock_buckets SET stock = stock - ? WHERE product_id = ? AND stock >= ? AND bucket = ?"

// NoBucket, as Take's bucket, takes from the product's own row.
const NoBucket = -1

// HomeBucket is the bucket of k that buyer user tries first, for the
// strategies that split a stock over buckets (sql-atomic's rows,
// redis-decr's keys): FNV-1a of the id, modulo k. It spreads buyers
// evenly, and a buyer's repeated clicks go to the same bucket first.
func HomeBucket(user string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(user))
	return int(h.Sum32() % uint32(k))
}

// Take takes q units of product in tx with the conditional UPDATE: from
// the product's row (bucket NoBucket), or from bucket 0..K-1 of its
// stock buckets. ErrNoUnits when the row holds fewer than q, else the
// database's error or nil.
func Take(tx *gorm.DB, q int, product string, bucket int) error {
	stmt, args := TakeUnits, []any{q, product, q}
	if bucket != NoBucket {
		stmt, args = takeBucket, append(args, bucket)
	}
	res := tx.Exec(stmt, args...)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNoUnits
	}
	return nil
}

// InsertAndTake writes o and takes its units (Take, on bucket), for
// sql-atomic: the INSERT first, so a repeated click fails on the unique key
// before it touches the hot row, and the UPDATE last, so the row's lock is
// held from it to the commit, no longer. Errors: ErrDuplicateKey,
// ErrNoUnits, or the database's.
func InsertAndTake(tx *gorm.DB, o Order, bucket int) error {
	row := UniqueRowOf(o)
	if bucket != NoBucket {
		row.Bucket = &bucket
	}
	if err := insert(tx, row); err != nil {
		return err
	}
	return Take(tx, o.Quantity, o.ProductID, bucket)
}

// giveUnits and giveBucket are Take's statements the other way round:
// they put q units back, for an order that ended unpaid (package life).
// giveUnits moves the row's version too, so that a sql-version sale that
// read the stock before the return writes nothing and reads again.
const (
	giveUnits  = "UPDATE products SET stock = stock + ?, version = version + 1 WHERE id = ?"
	giveBucket = "UPDATE stock_buckets SET stock = stock + ? WHERE product_id = ? AND bucket = ?"
)

// Give puts q units of product back on sale in tx: on the product's row
// (bucket nil), or on the stock bucket its units came from. Call it in
// the transaction whose life.End ended the order, and only if it did.
// Errors are the database's.
func Give(tx *gorm.DB, q int, product string, bucket *int) error {
	if bucket != nil {
		return tx.Exec(giveBucket, q, product, *bucket).Error
	}
	return tx.Exec(giveUnits, q, product).Error
}

// TakeRow takes product's row in tx with a no-op UPDATE (MySQL's row lock
// and SQLite's write lock alike), so that tx waits for a writer still
// holding it and every writer after it waits for tx.
func TakeRow(tx *gorm.DB, product string) error {
	return tx.Exec("UPDATE products SET stock = stock WHERE id = ?", product).Error
}

// TakeBucketRow is TakeRow for bucket of product's stock_buckets rows,
// the row a bucketed sql-atomic sale writes instead of the product's. A
// product whose buckets have no rows (redis-decr's live in Redis) has
// nothing to take.
func TakeBucketRow(tx *gorm.DB, product string, bucket int) error {
	return tx.Exec("UPDATE stock_buckets SET stock = stock WHERE product_id = ? AND bucket = ?", product, bucket).Error
}

// ReadStock reads the stock of product id with a plain SELECT through q
// (the database, or a transaction). A product the database does not have
// is stock.ErrNotFound.
func ReadStock(ctx context.Context, q *gorm.DB, id string) (int, error) {
	var left int
	err := q.WithContext(ctx).Raw("SELECT stock FROM products WHERE id = ?", id).Row().Scan(&left)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: product %q", stock.ErrNotFound, id)
	}
	return left, err
}

// Bought returns which of users have a live order (life.LiveSQL) for
// product, each with its id, read through q: an order that expired or
// was cancelled lets its buyer buy again. The database's errors come back
// as they are.
func Bought(ctx context.Context, q *gorm.DB, product string, users []string) (map[string]string, error) {
	var rows []struct{ UserID, ID string }
	err := q.WithContext(ctx).
		Raw("SELECT user_id, id FROM orders WHERE product_id = ? AND user_id IN ? AND "+life.LiveSQL, product, users).
		Scan(&rows).Error
	bought := make(map[string]string, len(rows))
	for _, r := range rows {
		bought[r.UserID] = r.ID
	}
	return bought, err
}
