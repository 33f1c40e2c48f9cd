// Package orderdb is what every strategy of package order shares when it
// writes a sale: the order and the errors a sale ends with, the one
// transaction (Writer.Commit), what a COMMIT whose answer was lost means
// (Writer.AfterFailure), the one-round-trip CALL (call.go), and the rows
// and statements more than one strategy runs (row.go, product_sql.go). It
// imports none of the strategy packages that import it.
package orderdb

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
)

// Order is a placed order, as stored in the orders table.
type Order struct {
	// ID is a random UUID.
	ID        string
	UserID    string
	ProductID string
	Quantity  int
	// Strategy is the product's strategy, which guarded this order.
	Strategy  strategy.Name
	CreatedAt time.Time
	// Queued is true for an order accepted into its product's queue
	// (redis-queue), answered 202 and not yet written.
	Queued bool
	// Bucket is the stock bucket the order's units came from, for a product
	// whose stock is split (stock.Product.Buckets); nil for its own stock.
	Bucket *int
	// PayWithin is its product's pay window (stock.Product.PayWithin):
	// above zero, the order is written pending, with a deadline the
	// database stamps (package life); zero, it is written paid, final.
	PayWithin time.Duration
}

// ReleaseTimeout bounds a short step that runs on a context that survives
// the caller's cancellation: releasing a lock, giving a reservation back,
// asking the database whether an order landed.
const ReleaseTimeout = 2 * time.Second

// Sleep waits d or until ctx ends, and then returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
