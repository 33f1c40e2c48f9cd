package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Audit is what the backends say about one product's sale.
type Audit struct {
	ProductID    string
	Strategy     strategy.Name
	InitialStock int
	// Stock is the stock left as the products table says (for a product
	// with stock buckets, the sum of its buckets).
	Stock int
	// Orders is the number of live order rows (pending or paid: an
	// order that expired or was cancelled gave its units back).
	Orders int
	// Sold is the sum of their quantities.
	Sold int
	// Oversold is max(0, Sold - InitialStock): units sold that never existed.
	Oversold int
	// DuplicateOrders counts orders beyond the first per buyer.
	DuplicateOrders int
	// Consistent is Stock + Sold == InitialStock. A lost update (two buyers
	// writing back the same stock) breaks it even before the sale oversells.
	Consistent bool
	// RedisStock is the stock as Redis has it (redis-decr and redis-queue
	// only, else nil;
	// nil too when Redis has none or could not be asked, see RedisErr).
	RedisStock *int
	// Drift is RedisStock - Stock: units Redis still offers that the
	// database does not have (or, below 0, the other way round). While no
	// order is in flight it must be 0; a unit reserved in Redis whose
	// order was never written would show here.
	Drift int
	// RedisErr says why RedisStock is nil for a redis-decr product ("" if
	// it is not).
	RedisErr string
	// QueueLength and QueuePending are a redis-queue product's backlog
	// (queue.Backlog): orders accepted and not yet written, and those of
	// them a consumer holds. Both 0 once drained, and for the other
	// strategies. While they are not, Drift counts the queued units.
	QueueLength, QueuePending int64
	// Buckets are the figures of each stock bucket of a product that has
	// them (stock.Product.Buckets), in bucket order; nil for the others.
	// Consistent holds only if every bucket's does.
	Buckets []BucketAudit
	// Life is a pay-window product's figures (auditLife); nil for a
	// product without a pay window, whose orders are final at once.
	Life *LifeAudit
}

// Audit computes the figures of productID's sale with SQL, in one
// transaction so that they describe one moment, and compares a Redis
// strategy's stock with Redis's right after. It keeps no counters, so any
// process sharing the backends gives the same answer. Safe for concurrent
// use, also during a sale (then Drift counts the reservations in flight).
//
// Errors: a *FieldError wrapping ErrInvalid for a malformed id;
// stock.ErrNotFound; ErrUnavailable when the database cannot be reached.
func (s *Service) Audit(ctx context.Context, productID string) (Audit, error) {
	if err := checkID("product_id", productID); err != nil {
		return Audit{}, err
	}
	a := Audit{ProductID: productID}
	// Only reads: on SQLite a read-only (deferred) transaction, so that the
	// file's one write lock is not held across every query below.
	var opts []*sql.TxOptions
	if s.db.Dialector.Name() == "sqlite" {
		opts = append(opts, &sql.TxOptions{ReadOnly: true})
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var name string
		var k int
		var payWithin int64
		err := tx.Raw("SELECT strategy, initial_stock, stock, buckets, pay_within_ms FROM products WHERE id = ?", productID).
			Row().Scan(&name, &a.InitialStock, &a.Stock, &k, &payWithin)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: product %q", stock.ErrNotFound, productID)
		}
		if err != nil {
			return err
		}
		a.Strategy = strategy.Name(name)
		if k > 1 {
			audit := auditBuckets // sql-atomic's rows
			if a.Strategy == strategy.RedisDecr {
				audit = auditOrderBuckets // redis-decr's, in Redis
			}
			if err := audit(tx, &a, k); err != nil {
				return err
			}
		}
		// Orders per buyer first, then summed: buyers with more than one
		// order are the duplicates.
		var buyers int
		err = tx.Raw(`SELECT COUNT(*), COALESCE(SUM(n), 0), COALESCE(SUM(q), 0)
			FROM (SELECT COUNT(*) AS n, SUM(quantity) AS q
			      FROM orders WHERE product_id = ? AND `+life.LiveSQL+` GROUP BY user_id) AS per_buyer`, productID).
			Row().Scan(&buyers, &a.Orders, &a.Sold)
		a.DuplicateOrders = a.Orders - buyers
		if err != nil || payWithin == 0 {
			return err
		}
		return auditLife(tx, &a)
	}, opts...)
	switch {
	case errors.Is(err, stock.ErrNotFound):
		return Audit{}, err
	case stock.IsConnError(err):
		return Audit{}, fmt.Errorf("%w: database: %w", ErrUnavailable, err)
	case err != nil:
		return Audit{}, fmt.Errorf("order: audit %q: %w", productID, err)
	}
	a.Oversold = max(0, a.Sold-a.InitialStock)
	if a.Life != nil {
		a.Oversold = max(a.Oversold, a.Stock+a.Sold-a.InitialStock)
	}
	a.Consistent = a.Stock+a.Sold == a.InitialStock
	for _, b := range a.Buckets {
		a.Consistent = a.Consistent && b.Consistent
	}
	if a.Strategy == strategy.RedisQueue && s.opts.Queue != nil {
		// The backlog first: a drained queue read before the stock means
		// the stock read after it has nothing in flight.
		if b, err := s.opts.Queue.Backlog(ctx, productID); err == nil {
			a.QueueLength, a.QueuePending = b.Length, b.Pending
			if b.Length > 0 && s.redisQueue != nil {
				// A backlog no consumer of this shop may be writing
				// (its shops died or restarted): this one takes part.
				s.redisQueue.KeepConsuming(productID)
			}
		} else {
			a.RedisErr = err.Error()
		}
	}
	if a.Strategy == strategy.RedisDecr || a.Strategy == strategy.RedisQueue {
		s.auditRedis(ctx, &a)
	}
	return a, nil
}

// auditRedis fills in a's Redis figures. Redis trouble does not fail the
// audit: the database's figures stand, and RedisErr says what is missing.
func (s *Service) auditRedis(ctx context.Context, a *Audit) {
	res := s.opts.RedisDecr
	if res == nil && s.opts.Queue != nil {
		res = redisstock.New(s.opts.Queue.Client()) // the same stock key
	}
	if res == nil {
		a.RedisErr = "this shop has no Redis for " + string(a.Strategy)
		return
	}
	names := []string{a.ProductID}
	if len(a.Buckets) > 0 && a.Strategy == strategy.RedisDecr {
		names = redisstock.Buckets(a.ProductID, len(a.Buckets)) // summed
	}
	left := 0
	for _, name := range names {
		n, err := res.Left(ctx, name)
		if err != nil {
			a.RedisErr = err.Error()
			return
		}
		left += n
	}
	a.RedisStock = &left
	a.Drift = left - a.Stock
}
