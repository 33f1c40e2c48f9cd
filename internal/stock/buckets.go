package stock

import (
	"context"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/strategy"
)

// bucketRow maps one bucket of a product's stock onto stock_buckets.
type bucketRow struct {
	ProductID string `gorm:"column:product_id;primaryKey"`
	Bucket    int    `gorm:"column:bucket;primaryKey"`
	Stock     int    `gorm:"column:stock"`
}

func (bucketRow) TableName() string { return "stock_buckets" }

// Split is how Create spreads stock over k buckets: stock/k each, and
// one more in the first stock%k buckets, so that no two differ by more
// than one unit.
func Split(stock, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = stock / k
		if i < stock%k {
			out[i]++
		}
	}
	return out
}

// RowBuckets reports whether p keeps its stock in bucket rows of
// stock_buckets: a sql-atomic product with 2 or more buckets. A
// redis-decr product's buckets are in Redis; its database keeps one
// stock, the product's row, and each order's bucket.
func RowBuckets(p Product) bool {
	return p.Buckets >= 2 && p.Strategy == strategy.SQLAtomic
}

// createBuckets inserts p's bucket rows in tx, in one multi-row INSERT,
// if p keeps its stock in them (RowBuckets); else it does nothing.
func createBuckets(tx *gorm.DB, p Product) error {
	if !RowBuckets(p) {
		return nil
	}
	rows := make([]bucketRow, p.Buckets)
	for i, n := range Split(p.Stock, p.Buckets) {
		rows[i] = bucketRow{ProductID: p.ID, Bucket: i, Stock: n}
	}
	return tx.Create(&rows).Error
}

// BucketStock is the stock left in product's buckets, summed, read with
// a plain SELECT through q (the database or a transaction); 0 for a
// product without buckets. The database's errors come back as they are.
func BucketStock(ctx context.Context, q *gorm.DB, product string) (int, error) {
	var left int
	err := q.WithContext(ctx).
		Raw("SELECT COALESCE(SUM(stock), 0) FROM stock_buckets WHERE product_id = ?", product).
		Row().Scan(&left)
	return left, err
}

// Buckets is the stock left in each of product's buckets, in bucket
// order, read with a plain SELECT through q; empty for a product without
// buckets.
func Buckets(ctx context.Context, q *gorm.DB, product string) ([]int, error) {
	var rows []bucketRow
	err := q.WithContext(ctx).Where("product_id = ?", product).Order("bucket").Find(&rows).Error
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.Stock
	}
	return out, err
}
