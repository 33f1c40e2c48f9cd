package order

import (
	"context"
	"fmt"

	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// newQueueSeller returns the Seller of this shop's redis-queue products
// (package redisqueue), on Options.Queue.
func (s *Service) newQueueSeller() *redisqueue.Seller {
	co := s.opts.QueueOptions
	if co.Logger == nil {
		co.Logger = s.opts.Logger
	}
	co.Observe = s.observeQueue
	return redisqueue.NewSeller(redisqueue.SellerOptions{Queue: s.opts.Queue, Writer: s.writer, Consumers: co,
		LockWait: s.opts.LockWait, Product: s.product, Work: s.work, Asked: s.startSweep,
		Allocate: allocate, Code: Outcome, SoldOut: s.markSoldOut})
}

// placeQueued is strategy redis-queue: package redisqueue sells it. Its
// order comes back with Queued set: accepted, written later.
func (s *Service) placeQueued(ctx context.Context, p stock.Product, req Request) (Order, error) {
	if s.redisQueue == nil {
		return Order{}, fmt.Errorf("order: strategy %s needs Options.Queue", p.Strategy)
	}
	o := s.newOrder(p, req)
	if err := s.redisQueue.Place(ctx, p, o); err != nil {
		return Order{}, err
	}
	o.Queued = true
	return o, nil
}

// QueueBacklog returns what is left to write of product's queue
// (redis-queue): see redisqueue.Backlog. Errors: ErrUnavailable when Redis
// cannot be reached, or this Service has no queue.
func (s *Service) QueueBacklog(ctx context.Context, product string) (redisqueue.Backlog, error) {
	if s.redisQueue == nil {
		return redisqueue.Backlog{}, fmt.Errorf("%w: no queue", ErrUnavailable)
	}
	b, err := s.opts.Queue.Backlog(ctx, product)
	if err != nil {
		return b, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return b, nil
}

// QueueProblem says why this shop's consumers cannot write queued orders
// ("" if they can, or it runs none), for the readiness probe.
func (s *Service) QueueProblem() string {
	if s.redisQueue == nil {
		return ""
	}
	return s.redisQueue.Problem()
}

// observeQueue counts a batch the consumers settled.
func (s *Service) observeQueue(product string, written, refused int) {
	for range written {
		s.happened(product, strategy.RedisQueue, EventWritten)
	}
	for range refused {
		s.happened(product, strategy.RedisQueue, EventRefused)
	}
}
