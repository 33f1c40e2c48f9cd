package redisstock

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/stock"
)

// Returns: an order that ended unpaid gives its units to the database
// first, then to Redis (Return). "flashsale:returned:{<id>}", the orders
// returned, makes a return idempotent; "flashsale:returns:{<id>}", their
// count, lets Lower refuse a database stock read before a return.

// BuyersKey is the key of the hash of product's buyers that Take and
// GiveBack keep: Return's buyers for redis-decr.
func BuyersKey(product string) string { return buyersKey(product) }

// Return puts qty units of order id of buyer back in product's stock, once:
// a second call for id, from any shop, changes nothing and reports false.
// The buyer leaves buyers (BuyersKey, or the queue's own) if it still names
// id. Call it only once the database has the order ended and its units
// back. Errors: stock.ErrNotLoaded, changing nothing (send again after a
// load); stock.ErrUnavailable or one wrapping ctx.Err(): the script may
// have run, call again.
func (s *Stock) Return(ctx context.Context, product, buyers, buyer, id string, qty int) (bool, error) {
	keys := []string{stockKey(product), buyers, returnedKey(product), returnsKey(product)}
	n, err := returnScript.Run(ctx, s.c, keys, buyer, qty, id).Int()
	switch {
	case err != nil:
		return false, redisErr(ctx, err, "return", product)
	case n == -2:
		return false, fmt.Errorf("%w: return %s to %q", stock.ErrNotLoaded, id, product)
	}
	return n != -1, nil
}

// Returns reads product's returns counter, for Lower: read it before the
// database's stock. Errors: stock.ErrUnavailable.
func (s *Stock) Returns(ctx context.Context, product string) (int64, error) {
	n, err := s.c.Get(ctx, returnsKey(product)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, redisErr(ctx, err, "read returns", product)
	}
	return n, nil
}
