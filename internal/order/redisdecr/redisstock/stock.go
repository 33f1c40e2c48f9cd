// Package redisstock keeps a product's stock in Redis for strategy
// redis-decr (and redis-queue): one Lua script per order answers sold out,
// already has one, or reserved, in one round trip, and a second gives a
// failed order's reservation back. A product's keys carry its id as a hash
// tag, so they share one Cluster slot, each kind in its own namespace:
//
//	flashsale:stock:{<id>}      the units left
//	flashsale:buyers:{<id>}     buyer -> its reservation's id
//	flashsale:reserved:{<id>}   the ledger, scored by due time (Due)
//	flashsale:sweep:{<id>}      a sweeper's turn, expiring (Turn)
//	flashsale:given-back:{<id>}:<reservation>   a mark, for an hour (GiveBack)
//
// Only the turn and the marks expire: the sale owns the rest.
package redisstock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/rediserr"
	"github.com/flashsale/flashsale/internal/stock"
)

// Errors returned by Stock, beside package stock's (stock.ErrSoldOut,
// stock.ErrDuplicate, stock.ErrNotLoaded, stock.ErrUnavailable), which it
// returns as they are. Compare them with errors.Is.
var (
	// ErrFull means Redis is at its maxmemory and refused the take at its
	// first write: nothing was reserved, and there is nothing to give back.
	// It wraps stock.ErrUnavailable.
	ErrFull = fmt.Errorf("%w: redis at its maxmemory, nothing reserved", stock.ErrUnavailable)
	// ErrGivenBack means the reservation was given back before its take
	// arrived: nothing was reserved.
	ErrGivenBack = errors.New("redisstock: reservation already given back")
	// ErrReturned means Lower changed nothing: an order's units were
	// returned since the caller read the returns counter (Returns), so
	// the database stock it read may be below the stock now.
	ErrReturned = errors.New("redisstock: units returned since the stock was read")
)

// givenBackTTL is how long a given-back mark lasts: a take whose reply
// timed out may still be retransmitted by TCP for about 15 minutes, and
// Redis runs it whenever it arrives.
const givenBackTTL = time.Hour

var (
	//go:embed scripts/take.lua
	takeLua    string
	takeScript = redis.NewScript(takeLua)

	//go:embed scripts/give_back.lua
	giveBackLua    string
	giveBackScript = redis.NewScript(giveBackLua)

	//go:embed scripts/lower.lua
	lowerLua    string
	lowerScript = redis.NewScript(lowerLua)

	//go:embed scripts/due.lua
	dueLua    string
	dueScript = redis.NewScript(dueLua)

	//go:embed scripts/return.lua
	returnLua    string
	returnScript = redis.NewScript(returnLua)

	//go:embed scripts/load.lua
	loadLua    string
	loadScript = redis.NewScript(loadLua)
)

// Stock is the Redis side of the products sold by redis-decr. It holds no
// state of its own and is safe for concurrent use.
type Stock struct {
	c redis.UniversalClient
}

// New returns a Stock on c, which stays the caller's to close. Build c with
// ContextTimeoutEnabled so that context deadlines cut a hung call short.
func New(c redis.UniversalClient) *Stock { return &Stock{c: c} }

// StockKey is the key of product's stock: the one name of it, which the
// load generator reads to measure the drift.
func StockKey(product string) string { return stockKey(product) }

func stockKey(product string) string    { return "flashsale:stock:{" + product + "}" }
func buyersKey(product string) string   { return "flashsale:buyers:{" + product + "}" }
func ledgerKey(product string) string   { return "flashsale:reserved:{" + product + "}" }
func returnedKey(product string) string { return "flashsale:returned:{" + product + "}" }
func returnsKey(product string) string  { return "flashsale:returns:{" + product + "}" }
func givenBackKey(product, id string) string {
	return "flashsale:given-back:{" + product + "}:" + id
}

// keys are the keys of the take and give-back scripts.
func keys(product, id string) []string {
	return []string{stockKey(product), buyersKey(product), givenBackKey(product, id), ledgerKey(product)}
}

// Load sets product's stock to units and forgets its buyers, ledger and
// returns: the start of a sale. On a product already on sale it would undo
// its reservations: use LoadIfMissing.
func (s *Stock) Load(ctx context.Context, product string, units int) error {
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, stockKey(product), units, 0)
		p.Del(ctx, buyersKey(product), ledgerKey(product), returnedKey(product), returnsKey(product))
		return nil
	})
	return redisErr(ctx, err, "load", product)
}

// LoadIfMissing sets product's stock to units only if Redis has none, and
// reports whether it did: the order flow's answer to stock.ErrNotLoaded,
// with the database's stock (whose own guards stop an oversell if
// reservations were in flight). returned are the owed returns that units
// counts already, read in the same snapshot: Return takes them as paid. A
// load counts as a return for Lower.
func (s *Stock) LoadIfMissing(ctx context.Context, product string, units int, returned ...string) (bool, error) {
	args := make([]any, 0, 1+len(returned))
	args = append(args, units)
	for _, id := range returned {
		args = append(args, id)
	}
	n, err := loadScript.Run(ctx, s.c, []string{stockKey(product), returnedKey(product), returnsKey(product)}, args...).Int()
	return n == 1, redisErr(ctx, err, "load", product)
}

// DuplicateError is Take's error when the buyer already holds a
// reservation; it wraps stock.ErrDuplicate.
type DuplicateError struct {
	Product, Buyer string
	// Reservation is the id of the buyer's reservation (its order's id).
	Reservation string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%v: %q holds reservation %s of %q", stock.ErrDuplicate, e.Buyer, e.Reservation, e.Product)
}

func (e *DuplicateError) Unwrap() error { return stock.ErrDuplicate }

// Take reserves qty units of product for buyer under reservation id (the
// order's; no '|'), writes it to the ledger due hold from now (Due), and
// returns the units left. Errors changing nothing: a *DuplicateError,
// stock.ErrSoldOut, stock.ErrNotLoaded, ErrGivenBack. stock.ErrUnavailable
// or one wrapping ctx.Err(): the script may have run, or still run, and
// giving id back is how to be sure.
func (s *Stock) Take(ctx context.Context, product, buyer, id string, qty int, hold time.Duration) (int, error) {
	r := Reservation{Product: product, Buyer: buyer, ID: id, Quantity: qty}
	res, err := takeScript.Run(ctx, s.c, keys(product, id), buyer, qty, id, hold.Milliseconds(), r.member()).Slice()
	var reply redis.Error
	if err != nil && errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "OOM ") {
		// A script that has written nothing is refused at its first
		// write (HSET), and take reads everything before it writes.
		return 0, fmt.Errorf("%w: take %q: %w", ErrFull, product, err)
	}
	if err != nil {
		return 0, redisErr(ctx, err, "take", product)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("redisstock: take %q: unexpected reply %v", product, res)
	}
	code, _ := res[0].(int64)
	switch code {
	case 1:
		left, _ := res[1].(int64)
		return int(left), nil
	case -1:
		held, _ := res[1].(string)
		return 0, &DuplicateError{Product: product, Buyer: buyer, Reservation: held}
	case -2:
		return 0, fmt.Errorf("%w: %q, asked for %d", stock.ErrSoldOut, product, qty)
	case -3:
		return 0, fmt.Errorf("%w: %q", stock.ErrNotLoaded, product)
	case -4:
		return 0, fmt.Errorf("%w: %s of %q", ErrGivenBack, id, product)
	}
	return 0, fmt.Errorf("redisstock: take %q: unexpected reply %v", product, res)
}

// Lower brings product's stock down to at most units, never up, and
// returns what is left. returns is Returns read before units were: if a
// return came since, Lower changes nothing (ErrReturned). stock.ErrNotLoaded
// if Redis has no stock for product.
func (s *Stock) Lower(ctx context.Context, product string, units int, returns int64) (int, error) {
	n, err := lowerScript.Run(ctx, s.c, []string{stockKey(product), returnsKey(product)}, units, returns).Int()
	if err != nil {
		return 0, redisErr(ctx, err, "lower", product)
	}
	switch n {
	case -1:
		return 0, fmt.Errorf("%w: %q", stock.ErrNotLoaded, product)
	case -2:
		return 0, fmt.Errorf("%w: %q", ErrReturned, product)
	}
	return n, nil
}

// GiveBack undoes reservation id of qty units of product for buyer, and
// reports whether it was held; either way it leaves the ledger. Safe to
// repeat, and for a reservation never made: it is given back at most once,
// only if it is the buyer's current one, and a Take of id arriving later
// reserves nothing (ErrGivenBack). If Redis lost the stock, the reservation
// is dropped and the stock left for LoadIfMissing.
func (s *Stock) GiveBack(ctx context.Context, product, buyer, id string, qty int) (bool, error) {
	r := Reservation{Product: product, Buyer: buyer, ID: id, Quantity: qty}
	n, err := giveBackScript.Run(ctx, s.c, keys(product, id), buyer, qty, id, givenBackTTL.Milliseconds(), r.member()).Int()
	if err != nil {
		return false, redisErr(ctx, err, "give back", product)
	}
	return n >= 0, nil
}

// Left returns product's stock as Redis has it; stock.ErrNotLoaded if it has none.
func (s *Stock) Left(ctx context.Context, product string) (int, error) {
	v, err := s.c.Get(ctx, stockKey(product)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("%w: %q", stock.ErrNotLoaded, product)
	}
	if err != nil {
		return 0, redisErr(ctx, err, "read", product)
	}
	return strconv.Atoi(v)
}

// redisErr translates a failed call (package rediserr's rule).
func redisErr(ctx context.Context, err error, op, product string) error {
	return rediserr.Wrap(ctx, err, stock.ErrUnavailable, "redisstock", op, product)
}
