package redisqueue

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// SellerOptions are what a Seller needs of the shop (package order's
// Service) it sells for. Queue, Writer and the funcs are required. The
// funcs are called concurrently and must be safe for it.
type SellerOptions struct {
	// Queue is where the units are taken and the orders queued, in Redis.
	Queue *Queue
	// Writer writes the queued orders to the database.
	Writer *orderdb.Writer
	// Consumers tune this shop's consumers.
	Consumers ConsumerOptions
	// LockWait bounds a buyer's wait for its turn to be sent to Redis,
	// and a load of the stock into Redis.
	LockWait time.Duration
	// Product reads a product (the shop's cache of them).
	Product func(ctx context.Context, id string) (stock.Product, error)
	// Work is the business work, once per batch: it ends early, with
	// ctx's error, if ctx ends.
	Work func(ctx context.Context, p stock.Product) error
	// Asked hears of each product a batch is written for (the shop
	// sweeps its unpaid orders).
	Asked func(p stock.Product)
	// Allocate is the shop's one decision of who gets units (package
	// order's allocate): it gives o to its buyer from left units, or
	// refuses it, and returns the units left. Code names a refusal's error
	// (package order's Outcome).
	Allocate func(o orderdb.Order, left int, bought map[string]string) (int, error)
	Code     func(err error) string
	// SoldOut hears that the database has no unit of product left.
	SoldOut func(product string)
}

// Seller sells redis-queue products for one shop process; several Sellers
// (shops) may share a database and Redis. It runs a consumer for each
// product it is asked about (Place, Status, KeepConsuming), which writes
// that product's queued orders (WriteQueued) until Close. It is safe for
// concurrent use.
type Seller struct {
	opts      SellerOptions
	q         *Queue
	w         *orderdb.Writer
	consumers *Consumers
	loads     singleflight.Group // product id; see load
}

// NewSeller returns a Seller as opts say.
func NewSeller(opts SellerOptions) *Seller {
	s := &Seller{opts: opts, q: opts.Queue, w: opts.Writer}
	s.consumers = NewConsumers(opts.Queue, s, opts.Consumers)
	return s
}

// Close stops the consumers (a batch being written finishes first) and
// waits for them. Calling it again does nothing more.
func (s *Seller) Close() { s.consumers.Close() }

// KeepConsuming starts product's consumer in this shop, or keeps it going.
func (s *Seller) KeepConsuming(product string) { s.consumers.KeepConsuming(product) }

// Problem says why this shop's consumers cannot write queued orders (""
// if they can), for the readiness probe.
func (s *Seller) Problem() string { return s.consumers.Problem() }

// Status is where order id stands as Redis says while it knows the order
// (Queue.Status); it starts the consumer of a queued order's product in
// this shop if the product is a redis-queue product of this shop's
// database (asked once, then cached): a product of another database on
// the same Redis is not this shop's to write. Errors: Queue.Status's.
func (s *Seller) Status(ctx context.Context, id string) (State, error) {
	st, err := s.q.Status(ctx, id)
	if st.ProductID != "" {
		p, perr := s.opts.Product(ctx, st.ProductID)
		if perr == nil && p.Strategy == strategy.RedisQueue {
			s.consumers.KeepConsuming(p.ID)
		}
	}
	return st, err
}
