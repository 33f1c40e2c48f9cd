// Package redisstock keeps a product's stock in Redis for strategy
// redis-decr (redis-queue keeps its stock here too), where most production
// flash sales deduct it: one Lua script per order answers "sold out",
// "you already have one" or "reserved" in one round trip, and only the
// buyers it reserves for go on to write their order to the database. A
// write that fails gives its reservation back with a second script, so a
// failed order never leaves a unit lost in Redis.
//
// The three keys of a product are its stock ("flashsale:stock:{<id>}", the
// units left), its buyers ("flashsale:buyers:{<id>}", a hash from each
// buyer holding a reservation or an order to that reservation's id) and
// its ledger ("flashsale:reserved:{<id>}", a sorted set of the
// reservations not yet settled, scored by when each falls due; see Due).
// None expires: the sale owns them. A sweeper's turn
// ("flashsale:sweep:{<id>}", see Turn) expires after a sweep. A
// reservation given back before Redis saw its take leaves a mark
// ("flashsale:given-back:{<id>}:<reservation>") for an hour, so that the
// take, if it still arrives, reserves nothing (GiveBack). The id is a hash
// tag, so a product's keys share one Redis Cluster slot (and a script may
// touch them all), and each kind of key has its own namespace.
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

// givenBackTTL is how long a given-back mark lasts. A take whose reply
// timed out may still be in the sender's kernel, retransmitted until TCP
// gives up (about 15 minutes with Linux's default tcp_retries2), and Redis
// runs it whenever it arrives; the mark must outlive it.
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

// Load sets product's stock to units and forgets its buyers and its
// ledger and its returns: the start of a sale, for a product just created. Loading a
// product already on sale would undo its reservations; use LoadIfMissing
// for that.
func (s *Stock) Load(ctx context.Context, product string, units int) error {
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, stockKey(product), units, 0)
		p.Del(ctx, buyersKey(product), ledgerKey(product), returnedKey(product), returnsKey(product))
		return nil
	})
	return redisErr(ctx, err, "load", product)
}

// LoadIfMissing sets product's stock to units only if Redis has none, and
// reports whether it did. The order flow calls it after stock.ErrNotLoaded with
// the database's stock: right when the stock was never loaded, and an
// overcount when Redis lost it while reservations were on their way to the
// database (the database's own conditional update still stops an
// oversell, and the audit shows the drift). returned are the orders whose
// returns units counts and Redis may not have been paid (the owed
// returns, read in the same database snapshot as units): Return takes
// them as already paid, so that none is counted twice. A load counts as a
// return for Lower: a lowering to a database stock read before it refuses.
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

// Take reserves qty units of product for buyer, under the reservation id
// id (the order's, used once; it must not contain '|'), and returns the
// units left. The reservation is written to the ledger too, due hold from
// now by Redis's clock (Due). Errors: a *DuplicateError (wrapping
// stock.ErrDuplicate), stock.ErrSoldOut, stock.ErrNotLoaded and ErrGivenBack, changing
// nothing; stock.ErrUnavailable when Redis cannot be reached, or an error
// wrapping ctx.Err(): then the script may or may not have run, or may
// still run, and giving id back is how to be sure.
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
// returns what is left. returns is product's returns counter (Returns),
// read before units were read from the database: a return since then
// may have raised the stock past units, and Lower changes nothing
// (ErrReturned; the caller reads again later). stock.ErrNotLoaded if Redis has
// no stock for product.
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
// reports whether it was held; either way the reservation leaves the
// ledger. It may be called again after an error, and
// for a reservation that may never have been made: a reservation is given
// back at most once, and only if it is the buyer's current one. Once it
// has run, a Take of id still on its way reserves nothing (ErrGivenBack),
// so a Take that timed out is undone even if it reaches Redis later. If
// Redis lost the stock meanwhile, the reservation is dropped and the stock
// left for LoadIfMissing to reload.
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
