package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The return of a Redis strategy's order (redis-decr, redis-queue): its
// units go back to the database and to Redis, once each, through any crash.
// The database first: life.End, orderdb.Give and a redis_owed row in one
// transaction (give); then Redis, with one script keyed by the order's id
// that takes it once however often it is sent (payRedis, settleOwed). A
// shop that dies in between leaves the row owed, and any shop's sweep pays
// it (sweepOwed). Redis first would be wrong: a crash after it leaves a
// unit on sale in Redis that the database counts sold. A paid row is sent
// once more before it goes, for a master that died before its replica had
// the return; a stock loaded meanwhile marks the owed rows returned
// (orderdb.OwedIDs). docs/redis-decr.md tells it in full.
const (
	// defaultOwedGrace is how old an owed row is before the sweep pays it:
	// the shop that wrote it pays it at once, unless it died.
	defaultOwedGrace = 2 * time.Second
	// defaultOwedKeep is how long a paid row stays before its last send:
	// longer than a Sentinel failover (its down-after, then an election),
	// and a Redis Cluster's.
	defaultOwedKeep = 15 * time.Second
	// settleTxTimeout bounds the transaction that holds an owed row while
	// its return is sent: longer than the send may take to give up (its
	// ReleaseTimeout, and a Redis client's read timeout past it).
	settleTxTimeout = 10 * time.Second
	// owedBatch bounds the owed rows one sweep pays.
	owedBatch = 256
)

// owedRow maps a row of table redis_owed (migration 0030).
type owedRow struct {
	OrderID   string `gorm:"column:order_id;primaryKey"`
	ProductID string `gorm:"column:product_id"`
	Bucket    *int   `gorm:"column:bucket"`
	UserID    string `gorm:"column:user_id"`
	Quantity  int    `gorm:"column:quantity"`
	CreatedMs int64  `gorm:"column:created_ms"`
	PaidMs    *int64 `gorm:"column:paid_ms"`
}

func (owedRow) TableName() string { return "redis_owed" }

// inRedis reports whether p's stock lives in Redis too.
func inRedis(p stock.Product) bool {
	return p.Strategy == strategy.RedisDecr || p.Strategy == strategy.RedisQueue
}

// give gives the units of o, which tx has just ended (life.End), back to
// p's stock in the database, and, for a Redis strategy, records in tx
// that Redis is owed them: the caller pays Redis after the commit
// (payRedis). Errors: the database's.
func (s *Service) give(tx *gorm.DB, p stock.Product, o life.Order) error {
	if !inRedis(p) {
		return orderdb.Give(tx, o.Quantity, o.ProductID, o.Bucket)
	}
	// redis-decr's buckets live in Redis: the database keeps the
	// product's one stock (redisdecr/buckets.go).
	if err := orderdb.Give(tx, o.Quantity, o.ProductID, nil); err != nil {
		return err
	}
	row := owedRow{OrderID: o.ID, ProductID: o.ProductID, Bucket: o.Bucket, UserID: o.UserID, Quantity: o.Quantity}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return err
	}
	return tx.Exec("UPDATE redis_owed SET created_ms = "+life.NowMs(tx)+" WHERE order_id = ?", o.ID).Error
}

// payRedis gives the units of orders, whose return to the database has
// committed (give), back to Redis and marks their owed rows paid
// (settleOwed), on a context that outlives ctx; what fails is left to the
// sweep (sweepOwed). Safe for concurrent use, and to run again.
func (s *Service) payRedis(ctx context.Context, p stock.Product, orders []life.Order) {
	if !inRedis(p) || len(orders) == 0 || s.crashAfterCommit.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orderdb.ReleaseTimeout)
	defer cancel()
	for _, o := range orders {
		if err := s.settleOwed(ctx, p, o.ID); err != nil {
			s.opts.Logger.WarnContext(ctx, "return the units to redis; the sweep will", "product", p.ID, "order", o.ID, "err", err)
		}
	}
}

// settleOwed settles order id's owed row (p is its product) in a
// transaction that holds the row (FOR UPDATE SKIP LOCKED; on SQLite the
// write lock), so that no two shops settle it at once and none sends a row
// another has deleted: an owed row is sent and marked paid; one paid
// owedKeep ago is sent once more and deleted; one paid since, gone, or held
// by another shop is left (skipped: a shop frozen mid-settle holds up
// nobody). The transaction outlives the send (settleTxTimeout), so the row
// stays held until the send has given up. Errors: Redis's (the row is left
// as it was), or the database's.
func (s *Service) settleOwed(ctx context.Context, p stock.Product, id string) error {
	txCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTxTimeout)
	defer cancel()
	return s.db.WithContext(txCtx).Transaction(func(tx *gorm.DB) error {
		now := life.NowMs(tx)
		q := "SELECT user_id, quantity, bucket, paid_ms, COALESCE(paid_ms <= " + now + " - ?, 0) FROM redis_owed WHERE order_id = ?"
		if tx.Dialector.Name() != "sqlite" {
			q += " FOR UPDATE SKIP LOCKED"
		}
		o := life.Order{ID: id, ProductID: p.ID}
		var paid *int64
		var resend bool
		err := tx.Raw(q, s.owedKeep.Milliseconds(), id).Row().Scan(&o.UserID, &o.Quantity, &o.Bucket, &paid, &resend)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil // settled, or being settled, by another shop
		case err != nil:
			return err
		case paid != nil && !resend:
			return nil // paid, and not yet due its last send
		}
		sendCtx, cancel := context.WithTimeout(ctx, orderdb.ReleaseTimeout)
		defer cancel()
		if err := s.pay(sendCtx, p, o); err != nil {
			return err
		}
		if paid == nil {
			return tx.Exec("UPDATE redis_owed SET paid_ms = "+now+" WHERE order_id = ?", id).Error
		}
		return tx.Exec("DELETE FROM redis_owed WHERE order_id = ?", id).Error
	})
}

// pay sends Redis the return of o (for the first time or again): Redis
// takes it once.
func (s *Service) pay(ctx context.Context, p stock.Product, o life.Order) error {
	so := orderdb.Order{ID: o.ID, UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity, Bucket: o.Bucket}
	var err error
	switch {
	case p.Strategy == strategy.RedisDecr && s.redisDecr != nil:
		_, err = s.redisDecr.Return(ctx, p, so)
	case p.Strategy == strategy.RedisQueue && s.opts.Queue != nil:
		_, err = s.opts.Queue.Return(ctx, p.ID, o.UserID, o.ID, o.Quantity)
	default:
		err = fmt.Errorf("%w: no redis for %s", ErrUnavailable, p.Strategy)
	}
	return err
}

// sweepOwed settles (settleOwed) the redis_owed rows that are due: owed for
// s.owedGrace or longer, or paid s.owedKeep ago; up to owedBatch a look and
// sweepLooks looks, each leaving out the products whose rows failed so they
// cannot starve the others. It returns how many it settled. Any number of
// shops may run it at once. Errors: the first that stopped a row.
func (s *Service) sweepOwed(ctx context.Context) (int, error) {
	done, first := 0, error(nil)
	var failed []string
	for range sweepLooks {
		rows, err := s.dueOwed(ctx, failed)
		if err != nil {
			return done, err
		}
		for _, r := range rows {
			if slices.Contains(failed, r.ProductID) {
				continue
			}
			if err := s.settleOwedOf(ctx, r); err != nil {
				failed = append(failed, r.ProductID)
				if first == nil {
					first = err
				}
				continue
			}
			done++
		}
		if len(rows) < owedBatch {
			break
		}
	}
	return done, first
}

// dueOwed reads up to owedBatch rows of redis_owed due to be settled, the
// oldest first, but those of the products skip.
func (s *Service) dueOwed(ctx context.Context, skip []string) ([]owedRow, error) {
	now := life.NowMs(s.db)
	q := s.db.WithContext(ctx).Table("redis_owed").
		Where("(paid_ms IS NULL AND created_ms <= "+now+" - ?) OR paid_ms <= "+now+" - ?",
			s.owedGrace.Milliseconds(), s.owedKeep.Milliseconds())
	if len(skip) > 0 {
		q = q.Where("product_id NOT IN ?", skip)
	}
	var rows []owedRow
	return rows, q.Order("created_ms").Limit(owedBatch).Find(&rows).Error
}

// settleOwedOf settles row r, or deletes it if its product is gone (no
// stock to return to).
func (s *Service) settleOwedOf(ctx context.Context, r owedRow) error {
	p, err := s.product(ctx, r.ProductID)
	if errors.Is(err, stock.ErrNotFound) {
		return s.db.WithContext(ctx).Exec("DELETE FROM redis_owed WHERE order_id = ?", r.OrderID).Error
	}
	if err != nil {
		return err
	}
	return s.settleOwed(ctx, p, r.OrderID)
}
