package order

import (
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
)

// BucketAudit is one stock bucket's part of an Audit.
type BucketAudit struct {
	Bucket int
	// InitialStock is the bucket's share of the product's initial stock
	// (stock.Split).
	InitialStock int
	// Stock is the units left in the bucket.
	Stock int
	// Orders and Sold are the live orders (pending or paid) whose units
	// came from the bucket, and the sum of their quantities.
	Orders, Sold int
	// Consistent is Stock + Sold == InitialStock and Stock >= 0.
	Consistent bool
}

// auditBuckets fills in a's per-bucket figures for a product of k
// buckets, in tx, and sets a.Stock to their sum: the product's own row
// keeps its initial stock, untouched.
func auditBuckets(tx *gorm.DB, a *Audit, k int) error {
	var rows []struct{ Bucket, Stock, Orders, Sold int }
	err := tx.Raw(`SELECT b.bucket AS bucket, b.stock AS stock,
			COUNT(o.id) AS orders, COALESCE(SUM(o.quantity), 0) AS sold
		FROM stock_buckets b LEFT JOIN orders o ON o.product_id = b.product_id AND o.bucket = b.bucket
			AND o.`+life.LiveSQL+`
		WHERE b.product_id = ? GROUP BY b.bucket, b.stock ORDER BY b.bucket`, a.ProductID).
		Scan(&rows).Error
	if err != nil {
		return err
	}
	split := stock.Split(a.InitialStock, k)
	a.Stock = 0
	a.Buckets = make([]BucketAudit, len(rows))
	for i, r := range rows {
		b := BucketAudit{Bucket: r.Bucket, Stock: r.Stock, Orders: r.Orders, Sold: r.Sold}
		if r.Bucket >= 0 && r.Bucket < k {
			b.InitialStock = split[r.Bucket]
		}
		b.Consistent = b.Stock >= 0 && b.Stock+b.Sold == b.InitialStock
		a.Buckets[i] = b
		a.Stock += r.Stock
	}
	return nil
}

// auditOrderBuckets fills in a's per-bucket figures for a redis-decr product
// of k buckets, in tx: its buckets are in Redis, the database keeps one
// stock and each order's bucket. A bucket's Stock is its share less its
// orders' units, so Consistent says no bucket sold more than its share.
func auditOrderBuckets(tx *gorm.DB, a *Audit, k int) error {
	var rows []struct{ Bucket, Orders, Sold int }
	err := tx.Raw(`SELECT bucket, COUNT(*) AS orders, SUM(quantity) AS sold FROM orders
		WHERE product_id = ? AND bucket IS NOT NULL AND `+life.LiveSQL+` GROUP BY bucket`, a.ProductID).Scan(&rows).Error
	if err != nil {
		return err
	}
	a.Buckets = make([]BucketAudit, k)
	for b, n := range stock.Split(a.InitialStock, k) {
		a.Buckets[b] = BucketAudit{Bucket: b, InitialStock: n, Stock: n}
	}
	for _, r := range rows {
		if r.Bucket >= 0 && r.Bucket < k {
			b := &a.Buckets[r.Bucket]
			b.Orders, b.Sold, b.Stock = r.Orders, r.Sold, b.InitialStock-r.Sold
		}
	}
	for i := range a.Buckets {
		a.Buckets[i].Consistent = a.Buckets[i].Stock >= 0
	}
	return nil
}
