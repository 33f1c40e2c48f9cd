package redisqueue

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a consumer does in Redis around a batch's write: read its entries,
// then acknowledge the written ones and dead-letter the refused ones.

// parseEntry reads an order from its stream entry.
func parseEntry(m redis.XMessage) (Order, bool) {
	str := func(k string) string { s, _ := m.Values[k].(string); return s }
	qty, err1 := strconv.Atoi(str("qty"))
	us, err2 := strconv.ParseInt(str("created"), 10, 64)
	o := Order{ID: str("id"), UserID: str("user"), ProductID: str("product"), Quantity: qty,
		CreatedAt: time.UnixMicro(us).UTC()}
	return o, err1 == nil && err2 == nil && o.ID != "" && o.UserID != "" && o.ProductID != ""
}

// written acknowledges entries, whose orders (if any) are written, deletes
// them, and forgets the orders' queued status.
func (q *Queue) written(ctx context.Context, product string, entries, orders []string) error {
	if orders == nil {
		orders = make([]string, len(entries))
		for i := range orders {
			orders[i] = "-"
		}
	}
	args := make([]any, 0, 2+2*len(entries))
	args = append(args, Group, len(entries))
	for _, e := range entries {
		args = append(args, e)
	}
	for _, o := range orders {
		args = append(args, o)
	}
	err := writtenScript.Run(ctx, q.c, []string{streamKey(product), statusKey(product)}, args...).Err()
	return redisErr(ctx, err, "acknowledge", product)
}

// refuse dead-letters entry, whose order o the database refused for r:
// its units go back, its status says why, and it is acknowledged. It
// reports whether this call did it (false: the entry was settled before).
func (q *Queue) refuse(ctx context.Context, entry string, o Order, r *Refusal) (bool, error) {
	keys := []string{stockKeyOf(o.ProductID), buyersKey(o.ProductID), streamKey(o.ProductID), statusKey(o.ProductID)}
	n, err := refusedScript.Run(ctx, q.c, keys, Group, entry, o.UserID, o.ID, o.Quantity, refusal(r.Code, r.Reason)).Int()
	if err != nil {
		return false, redisErr(ctx, err, "dead-letter", o.ProductID)
	}
	return n == 1, nil
}
