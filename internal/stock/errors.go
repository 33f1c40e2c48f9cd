package stock

import (
	"errors"
	"fmt"
)

// The order flow's errors about the stock, returned by Store and by every
// other keeper of the stock (package redisstock's Redis stock, package
// queue's accepts, package orderdb's rows) as they are: package order
// returns them as its own (order.ErrSoldOut is ErrSoldOut), and its one
// table names each for HTTP, metrics and logs. Compare them with
// errors.Is; the returned errors wrap them with the product or order id
// and, where there is one, the cause.
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
	// ErrBusy means the shop could not serve the order in time: a
	// redis-queue accept waited the whole lock wait for its turn on a
	// shared round trip to Redis and was withdrawn unsent, or a buyer of a
	// batched product found more buyers queued than the batches serve
	// within half the lock wait, and was turned away at once. Nothing was
	// written; the buyer may retry.
	ErrBusy = errors.New("stock: busy, nothing sent")
	// ErrUnavailable means a backend could not be reached or could not
	// serve: the database, Redis (for redlock, a majority of its nodes),
	// etcd or ZooKeeper. From an order, nothing was committed and the
	// buyer may retry; a keeper's call whose answer was lost may have run
	// (its doc says so: call again).
	ErrUnavailable = errors.New("stock: backend unavailable")
)
