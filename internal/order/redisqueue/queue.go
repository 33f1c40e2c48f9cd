// Package redisqueue is strategy redis-queue: peak shaving. One Lua script
// per click (Accept) checks the buyer, takes the units and appends the
// order to the product's stream, atomically, and the buyer is answered 202
// at once. A consumer in every shop reads the stream in one consumer group
// and writes the orders in batches, acknowledging each entry after its
// batch committed; an entry whose consumer died is claimed by a live one
// (XAUTOCLAIM), one the database refuses for good is dead-lettered
// (Refuse). Package order's Service sells through a Seller.
//
// The files, in the order an order meets them: place.go (the accept, and
// at the end the batch's write); queue.go and scripts/accept.lua (the keys,
// the script); accepts.go (shared round trips); consumers.go, consumer.go
// and bell.go (the consumers); ack.go, scripts/written.lua and
// scripts/refused.lua (acknowledged, or dead-lettered); status.go and
// seller.go (Status, the backlog, the wiring); return.go (an unpaid
// order's units back).
//
// A product's keys carry its id as a hash tag, so one script may touch
// them all; one key per order lets any shop answer Status:
//
//	flashsale:stock:{<id>}          the units left (package redisstock's key)
//	flashsale:queue:buyers:{<id>}   buyer -> the id of its order
//	flashsale:queue:orders:{<id>}   the stream; its length is the backlog
//	flashsale:queue:status:{<id>}   order id -> queued, or refused:<code>:<why>
//	flashsale:queue:order:{<order id>}   the product's id, for a day
//
// A Redis that restarts without its data loses the orders accepted and not
// yet written (with appendfsync everysec, about the last second).
package redisqueue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/rediserr"
	"github.com/flashsale/flashsale/internal/stock"
)

// Queue's errors are package stock's, the order flow's one vocabulary:
// stock.ErrSoldOut, stock.ErrDuplicate (a *DuplicateError),
// stock.ErrNotLoaded, stock.ErrBusy, stock.ErrUnknownOrder and
// stock.ErrUnavailable. Each method's doc says which come back when.

// Group is the one consumer group of every product's stream: every shop's
// consumer is a member, and each entry goes to one of them.
const Group = "writers"

// orderTTL is how long an accepted order's product can be looked up by
// the order's id (Status): long enough to poll, not for ever.
const orderTTL = 24 * time.Hour

var (
	//go:embed scripts/accept.lua
	acceptLua    string
	acceptScript = redis.NewScript(acceptLua)

	//go:embed scripts/written.lua
	writtenLua    string
	writtenScript = redis.NewScript(writtenLua)

	//go:embed scripts/refused.lua
	refusedLua    string
	refusedScript = redis.NewScript(refusedLua)
)

func buyersKey(product string) string { return "flashsale:queue:buyers:{" + product + "}" }
func streamKey(product string) string { return "flashsale:queue:orders:{" + product + "}" }
func statusKey(product string) string { return "flashsale:queue:status:{" + product + "}" }
func orderKey(id string) string       { return "flashsale:queue:order:{" + id + "}" }

// StreamKey is the key of product's stream of queued orders.
func StreamKey(product string) string { return streamKey(product) }

// Queue is the Redis side of the products sold by redis-queue. It is safe
// for concurrent use; what it holds is the accepts waiting to be sent.
type Queue struct {
	c       redis.UniversalClient
	stock   *redisstock.Stock
	accepts acceptQueue // the accepts waiting for a round trip (accepts.go)
	bells   bells       // who hears of its accepted orders (bell.go)
}

// New returns a Queue on c, which stays the caller's to close. Build c
// with ContextTimeoutEnabled so that context deadlines cut a hung call
// short.
func New(c redis.UniversalClient) *Queue { return &Queue{c: c, stock: redisstock.New(c)} }

// Client is the Redis client the queue runs on.
func (q *Queue) Client() redis.UniversalClient { return q.c }

// Load sets product's stock to units, forgets its buyers, and creates the
// consumer group of its stream: the start of a sale, for a product just
// created.
func (q *Queue) Load(ctx context.Context, product string, units int) error {
	if err := q.stock.Load(ctx, product, units); err != nil {
		return fmt.Errorf("%w: %w", stock.ErrUnavailable, err)
	}
	if err := q.c.Del(ctx, buyersKey(product)).Err(); err != nil {
		return redisErr(ctx, err, "load", product)
	}
	return q.ensureGroup(ctx, product)
}

// ensureGroup creates product's stream and its consumer group, reading
// from the stream's start, unless the group exists.
func (q *Queue) ensureGroup(ctx context.Context, product string) error {
	err := q.c.XGroupCreateMkStream(ctx, streamKey(product), Group, "0").Err()
	if err != nil && !isBusyGroup(err) {
		return redisErr(ctx, err, "create group", product)
	}
	return nil
}

// isBusyGroup reports whether err is Redis saying the group exists.
func isBusyGroup(err error) bool { return redis.HasErrorPrefix(err, "BUSYGROUP") }

// Order is one queued order, as its stream entry has it.
type Order struct {
	ID, UserID, ProductID string
	Quantity              int
	CreatedAt             time.Time
}

// DuplicateError is Accept's error when the buyer already has an order for
// the product; it wraps stock.ErrDuplicate.
type DuplicateError struct {
	Product, Buyer string
	// Order is the id of the buyer's order.
	Order string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%v: %q has order %s of %q", stock.ErrDuplicate, e.Buyer, e.Order, e.Product)
}

func (e *DuplicateError) Unwrap() error { return stock.ErrDuplicate }

// AcceptBy takes o's units and appends o to its product's stream, in one
// script sent in a shared round trip (accepts.go), and returns the units
// left. o waits for its trip until sendBy (zero: only ctx bounds it). o's
// id is recorded for Status in the same trip, before the script runs.
//
// Errors, changing nothing: a *DuplicateError, stock.ErrSoldOut,
// stock.ErrNotLoaded; stock.ErrBusy when o was not sent by sendBy (retry).
// stock.ErrUnavailable, or one wrapping ctx.Err(), when Redis did not
// answer: the script may have run, and a retry says which (a duplicate
// naming o.ID if it did).
func (q *Queue) AcceptBy(ctx context.Context, o Order, sendBy time.Time) (int, error) {
	res, err := q.acceptShared(ctx, o, sendBy)
	if errors.Is(err, stock.ErrBusy) {
		return 0, fmt.Errorf("%w: %q, by %v", stock.ErrBusy, o.ProductID, sendBy.Format(time.StampMilli))
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			// The trip failed after the caller gave up: say both.
			return 0, fmt.Errorf("queue: accept %q: %w: %w", o.ProductID, cerr, err)
		}
		return 0, redisErr(ctx, err, "accept", o.ProductID)
	}
	if len(res) < 2 {
		return 0, fmt.Errorf("queue: accept %q: unexpected reply %v", o.ProductID, res)
	}
	code, _ := res[0].(int64)
	switch code {
	case 1:
		left, _ := res[1].(int64)
		return int(left), nil
	case -1:
		held, _ := res[1].(string)
		return 0, &DuplicateError{Product: o.ProductID, Buyer: o.UserID, Order: held}
	case -2:
		return 0, fmt.Errorf("%w: %q, asked for %d", stock.ErrSoldOut, o.ProductID, o.Quantity)
	case -3:
		return 0, fmt.Errorf("%w: %q", stock.ErrNotLoaded, o.ProductID)
	}
	return 0, fmt.Errorf("queue: accept %q: unexpected reply %v", o.ProductID, res)
}

// Lower brings product's Redis stock down to at most units (redisstock's
// Lower), after the database refused units Redis had offered; a return
// since returns (redisstock.Stock.Returns, read before units) leaves it be.
func (q *Queue) Lower(ctx context.Context, product string, units int, returns int64) error {
	_, err := q.stock.Lower(ctx, product, units, returns)
	if err != nil && !errors.Is(err, stock.ErrNotLoaded) && !errors.Is(err, redisstock.ErrReturned) {
		return fmt.Errorf("%w: %w", stock.ErrUnavailable, err)
	}
	return nil
}

// redisErr translates a failed call (package rediserr's rule).
func redisErr(ctx context.Context, err error, op, product string) error {
	return rediserr.Wrap(ctx, err, stock.ErrUnavailable, "queue", op, product)
}

// stockKeyOf is product's stock key, package redisstock's: the one the audit
// and the load generator read.
func stockKeyOf(product string) string { return redisstock.StockKey(product) }
