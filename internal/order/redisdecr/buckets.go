package redisdecr

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// redis-decr over K stock buckets (stock.Product.Buckets >= 2): the stock
// split over K Redis stocks, each under a hash tag of its own
// (redisstock.Bucket), so that K Cluster masters take the reservations. The
// database keeps the product's one stock (the group commit takes that row
// once per group) and each order's bucket; a bucket's database stock is its
// share (stock.Split) less its orders' units (bucketsLeft). A buyer tries
// their home bucket (orderdb.HomeBucket), then the next ones in turn while
// each answers sold out.
//
// Why it is exact: each bucket's script takes its units, and the
// conditional UPDATE on the product's row guards the total; one order per
// buyer across buckets is the database's unique key (a repeated click that
// reserves in another bucket is refused at the INSERT and given back,
// Place); and "sold out" comes only after every bucket was found short.
// The give-back, the sweep and a settlement in doubt work bucket by bucket:
// an order knows its bucket. docs/buckets.md tells it step by step.

// know records p's buckets' names (redisstock.Buckets), which this Seller
// needs to name its Redis keys after the order (nameOf) and to sweep it,
// once per product: naming buckets searches for their slots.
func (s *Seller) know(p stock.Product) {
	if p.Buckets < 2 {
		return
	}
	if v, ok := s.buckets.Load(p.ID); ok && len(v.([]string)) == p.Buckets {
		return
	}
	s.buckets.Store(p.ID, redisstock.Buckets(p.ID, p.Buckets))
}

// bucketNames are product's buckets' names as this Seller knows them
// (know); nil for a product without.
func (s *Seller) bucketNames(product string) []string {
	if v, ok := s.buckets.Load(product); ok {
		return v.([]string)
	}
	return nil
}

// bucketsOf is product's number of buckets as this Seller knows it (know);
// 0 for a product without.
func (s *Seller) bucketsOf(product string) int { return len(s.bucketNames(product)) }

// nameOf is the name under which Redis keeps o's units: its bucket's
// (redisstock.Bucket), or its product's.
func (s *Seller) nameOf(o orderdb.Order) string {
	if o.Bucket == nil {
		return o.ProductID
	}
	return s.bucketNames(o.ProductID)[*o.Bucket]
}

// namesOf are the names under which Redis keeps product's stock: its
// buckets', or its own.
func (s *Seller) namesOf(product string) []string {
	if names := s.bucketNames(product); len(names) >= 2 {
		return names
	}
	return []string{product}
}

// reserveAny reserves o's units in p's stock or, the buyer's home first, in
// the first of p's buckets that is not sold out, and returns o with its
// bucket set. stock.ErrSoldOut only when every bucket was short; any other
// error ends the search (a take that failed may have run: reserve gives it
// back, and a duplicate is a duplicate in any bucket).
func (s *Seller) reserveAny(ctx context.Context, p stock.Product, o orderdb.Order) (orderdb.Order, error) {
	if p.Buckets < 2 {
		return o, s.reserve(ctx, p, o)
	}
	home := orderdb.HomeBucket(o.UserID, p.Buckets)
	for i := range p.Buckets {
		b := (home + i) % p.Buckets
		o.Bucket = &b
		err := s.reserve(ctx, p, o)
		if !errors.Is(err, stock.ErrSoldOut) {
			return o, err
		}
	}
	o.Bucket = nil
	return o, fmt.Errorf("%w: %q has no bucket with %d left", stock.ErrSoldOut, p.ID, o.Quantity)
}

// databaseStock reads the stock the database has for o's units, its
// bucket's (bucketsLeft) or its product's, and the ended orders of that
// stock whose returns it counts and Redis may not have (orderdb.OwedIDs), in
// one snapshot: what LoadIfMissing loads. Errors: the database's.
func (s *Seller) databaseStock(ctx context.Context, o orderdb.Order) (left int, owed []string, err error) {
	err = orderdb.Snapshot(ctx, s.db, func(tx *gorm.DB) error {
		if o.Bucket == nil {
			if left, err = orderdb.ReadStock(ctx, tx, o.ProductID); err != nil {
				return err
			}
		} else {
			all, _, err := bucketsLeft(tx, o.ProductID, s.bucketsOf(o.ProductID))
			if err != nil {
				return err
			}
			left = max(all[*o.Bucket], 0)
		}
		owed, err = orderdb.OwedIDs(tx, o.ProductID, o.Bucket)
		return err
	})
	return left, owed, err
}

// bucketsLeft reads, in tx (a Snapshot's), what the database says is left
// of each of product's k buckets: its share (stock.Split) less the units of
// its live orders; and the product's stock, the total. Redis's bucket holds
// at most that, less the reservations on their way (lowerBuckets counts on
// it). Errors: the database's.
func bucketsLeft(tx *gorm.DB, product string, k int) (left []int, total int, err error) {
	var initial int
	err = tx.Raw("SELECT initial_stock, stock FROM products WHERE id = ?", product).Row().Scan(&initial, &total)
	if err != nil {
		return nil, 0, err
	}
	var rows []struct{ Bucket, Sold int }
	err = tx.Raw(`SELECT bucket, SUM(quantity) AS sold FROM orders
		WHERE product_id = ? AND bucket IS NOT NULL AND `+life.LiveSQL+` GROUP BY bucket`, product).Scan(&rows).Error
	if err != nil {
		return nil, 0, err
	}
	left = stock.Split(initial, k)
	for _, r := range rows {
		if r.Bucket >= 0 && r.Bucket < k {
			left[r.Bucket] -= r.Sold
		}
	}
	return left, total, nil
}

// Load sets p's stock in Redis, as redisstock.Stock.Load does (the start of
// a sale, for a product just created): each bucket's share of it
// (stock.Split, as the database's rows have it) for a bucketed product.
// Errors: Load's, for the first bucket that failed.
func (s *Seller) Load(ctx context.Context, p stock.Product) error {
	s.know(p)
	if p.Buckets < 2 {
		return s.res.Load(ctx, p.ID, p.Stock)
	}
	names := s.bucketNames(p.ID)
	for b, n := range stock.Split(p.Stock, p.Buckets) {
		if err := s.res.Load(ctx, names[b], n); err != nil {
			return err
		}
	}
	return nil
}

// lowerBuckets is lowerToDatabase for a product of k buckets: each bucket's
// Redis stock comes down to the database's for it (bucketsLeft; at least 0,
// at most the product's total, so a bucket oversold after Redis lost its key
// leaves no phantom units in the others). Errors: the read's, or the first
// Lower's but stock.ErrNotLoaded; the other buckets are lowered all the same.
func (s *Seller) lowerBuckets(ctx context.Context, product string, k int) error {
	names := s.bucketNames(product)
	returns := make([]int64, len(names))
	for b, name := range names { // before the database: see lowerToDatabase
		n, err := s.res.Returns(ctx, name)
		if err != nil {
			return err
		}
		returns[b] = n
	}
	var left []int
	var total int
	err := orderdb.Snapshot(ctx, s.db, func(tx *gorm.DB) (err error) {
		left, total, err = bucketsLeft(tx, product, k)
		return err
	})
	if err != nil {
		return err
	}
	if total == 0 {
		s.opts.SoldOut(product)
	}
	s.afterRead(product)
	var first error
	for b, n := range left {
		if _, err := s.res.Lower(ctx, names[b], max(min(n, total), 0), returns[b]); err != nil &&
			!errors.Is(err, stock.ErrNotLoaded) && !errors.Is(err, redisstock.ErrReturned) && first == nil {
			first = err
		}
	}
	return first
}
