package redisqueue

import (
	"context"
	"fmt"

	"github.com/flashsale/flashsale/internal/stock"
)

// Return puts qty units of the written order id of buyer back in
// product's Redis stock, once (redisstock.Stock.Return): the order ended
// unpaid, and the database has its units back already. The buyer leaves
// the product's buyers, if that order is still theirs there, and may be
// accepted again. A second call for id changes nothing and reports false.
// Errors: stock.ErrUnavailable (the script may have run: call again).
func (q *Queue) Return(ctx context.Context, product, buyer, id string, qty int) (bool, error) {
	ok, err := q.stock.Return(ctx, product, buyersKey(product), buyer, id, qty)
	if err != nil {
		return false, fmt.Errorf("%w: %w", stock.ErrUnavailable, err)
	}
	return ok, nil
}
