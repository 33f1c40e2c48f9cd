package redisstock

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/stock"
)

// Returns: an order that ended unpaid (expired or cancelled) gives its
// units back to the database first, in the transaction that ends it, and
// then to Redis (Return). Two more keys of a product (or bucket) say what
// Redis was given: "flashsale:returned:{<id>}", the set of the orders
// returned, which makes a return idempotent, and "flashsale:returns:{<id>}",
// how many returns there were, which Lower checks so that a database
// stock read before a return cannot undo it.

// BuyersKey is the key of the hash of product's buyers that Take and
// GiveBack keep: Return's buyers for redis-decr.
func BuyersKey(product string) string { return buyersKey(product) }

// Return puts qty units of order id of buyer back in product's stock,
// once: a second call for id, from this shop or any other, changes
// nothing and reports false. buyers is the hash that holds the buyer's
// order id (BuyersKey, or the queue's own); the buyer leaves it if it
// still names id, and may buy again. Call it only once the database has
// the order ended and its units back. Errors: stock.ErrNotLoaded, changing
// nothing, when Redis has no stock for product (it lost it): send the
// return again once a load (LoadIfMissing, which marks the returns the
// database counts) has set it; stock.ErrUnavailable, or an error wrapping
// ctx.Err(): then the script may have run, and calling again is how to
// be sure.
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
