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

// redis-decr over K stock buckets (stock.Product.Buckets >= 2): a hot
// product's stock split over K Redis stocks, each under a hash tag of its
// own (redisstock.Bucket), so that on a Redis Cluster K masters take its
// reservations where one master took them all. The database is not split:
// it keeps the product's one stock, which every write takes its units
// from as without buckets (the group commit takes that hot row once per
// group, not per order), and each order's bucket (orders.bucket). A
// bucket's stock in the database is its share of the initial stock
// (stock.Split) less its orders' units (bucketsLeft).
//
// A buyer tries their home bucket first (orderdb.HomeBucket: FNV-1a of the id,
// modulo K, the choice sql-atomic's buckets make), then home+1, home+2, ...
// mod K, while each answers sold out. Each try is the one take script on
// that bucket's keys: it checks the buyer against the bucket's buyers,
// then the bucket's units, in one round trip.
//
// Why it is exact:
//   - No oversell: each bucket's units are taken by its own script, and
//     each order's by the conditional UPDATE on the product's row, which
//     guards the total whatever Redis says.
//   - One order per buyer, across the buckets and the fallback: the claim
//     is the database's unique key (orders_unique_buyer), which allows one
//     order per product and buyer whatever its bucket. A claim key in the
//     product's own tag, taken before the bucket, would say so in Redis,
//     but every buyer would then call on that one master, and the buckets
//     would spread nothing. Each bucket's buyers still refuse most
//     repeated clicks in Redis: a buyer's clicks try the buckets in the
//     same order, so they meet in the bucket that sold them, unless a
//     unit came back to a bucket tried before it. That click is
//     reserved, refused by the unique key, and given back to its bucket
//     (Place): the buyer is told duplicate, and the unit is on sale again.
//   - Never "sold out" while a bucket holds a unit: the answer comes only
//     after every bucket's script found it short, each reading its
//     bucket as it is. A bucket grows only when a reservation is given
//     back (its order failed), and a unit out on a reservation is not on
//     sale, with buckets or without.
//
// Its keeping (the give-back, the sweep's lowering and reclaiming, the
// settlement of a write in doubt) works bucket by bucket: an order knows
// its bucket (orderdb.Order.Bucket), a bucket's ledger holds its own
// reservations, and its stock is lowered to the database's for it.

// know records p's buckets' names (redisstock.Buckets), which this Seller
// needs to name its Redis keys after the order (nameOf) and to sweep it.
// They are computed once per product: naming 256 buckets costs some
// 150 ms of CPU.
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

// reserveAny reserves o's units: in p's stock, or in one of p's buckets,
// the buyer's home first, then the others in turn while each is sold
// out. It returns o with its bucket set. Its errors are reserve's; it is
// stock.ErrSoldOut only when every bucket was found short. Any other
// error ends the search: a take that failed may have run (reserve gives
// it back, to its bucket), and a duplicate is a duplicate in any bucket.
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

// bucketsLeft reads what the database says is left of each of product's
// k buckets: its share of the initial stock (stock.Split, as Load loaded
// it), less the units of the live orders written from it (an order that
// expired or was cancelled gave its units back); and the product's
// stock, the total left. tx is a Snapshot's, so that both reads describe
// one moment. Each unit an order took from bucket b was reserved in
// Redis's bucket b first, so Redis's bucket holds at most that, less the
// reservations on their way (lowerBuckets counts on it). Errors: the
// database's.
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

// lowerBuckets is lowerToDatabase for a product of k buckets: each
// bucket's Redis stock comes down to what the database says is left of it
// (bucketsLeft; never below 0), and never above the product's stock (a
// bucket that sold past its share, after Redis lost its key, leaves
// phantom units in the others), and a product whose database stock is 0
// is sold out. Errors: the database's read, or the first Lower's other
// than stock.ErrNotLoaded (a bucket Redis does not have: nothing to
// lower); the other buckets are lowered all the same.
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
