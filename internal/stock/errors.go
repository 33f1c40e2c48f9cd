package stock

import (
	"errors"
	"fmt"
)

// The order flow's errors about the stock, returned as they are by every
// keeper of the stock and by package order, whose one table names them.
// Compare with errors.Is; they come wrapped with the id and the cause.
var (
	// ErrNotFound means no product has the given id.
	ErrNotFound = errors.New("stock: not found")
	// ErrUnknownOrder means no order has the given id: never accepted,
	// or accepted so long ago that only a written order would still be
	// known. It wraps ErrNotFound.
	ErrUnknownOrder = fmt.Errorf("%w: no such order", ErrNotFound)
	// ErrAlreadyExists means a product with the given id exists already.
	ErrAlreadyExists = errors.New("stock: already exists")
	// ErrInvalid means a product or an id failed validation; the message
	// names the field and says why.
	ErrInvalid = errors.New("stock: invalid")
	// ErrSoldOut means fewer units are left than the buyer asked for: in
	// the database, or in Redis for redis-decr and redis-queue. Nothing
	// was taken.
	ErrSoldOut = errors.New("stock: sold out")
	// ErrNotLoaded means the product's stock is not in Redis: it was never
	// loaded, or Redis lost it (a restart without persistence). Nothing
	// was taken; the order flow loads the database's stock and asks again.
	ErrNotLoaded = errors.New("stock: not loaded in redis")
	// ErrDuplicate means the buyer already holds units of the product in
	// Redis: a reservation or an order (redis-decr), an accepted order
	// (redis-queue). The error is the keeper's DuplicateError, which names
	// it; the order flow tells an order from a click still in flight.
	ErrDuplicate = errors.New("stock: buyer already holds units")
	// ErrBusy means the shop could not serve the order in time (a redis-queue
	// accept never got its turn to Redis, or too many buyers were queued for
	// a batched product). Nothing was written; the buyer may retry.
	ErrBusy = errors.New("stock: busy, nothing sent")
	// ErrUnavailable means a backend (database, Redis, etcd, ZooKeeper) could
	// not serve. From an order nothing was committed; a keeper's call whose
	// answer was lost may have run (its doc says so).
	ErrUnavailable = errors.New("stock: backend unavailable")
)
