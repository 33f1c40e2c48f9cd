package order

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Place places one order for req, the way the product's strategy sells
// (see the package doc). Safe for concurrent use: concurrent calls for one
// product, in any process sharing the backends, queue on the product lock,
// the row lock or Redis, as the strategy says.
//
// Errors wrap the sentinels of errors.go; a *FieldError for an invalid
// request, stock.ErrNotFound for an unknown product, ctx.Err() when ctx
// ends first. Nothing is written on any error but ErrInDoubt (the order
// may exist). A redis-queue order comes back Queued: written later.
func (s *Service) Place(ctx context.Context, req Request) (Order, error) {
	start := time.Now()
	o, sn, err := s.place(ctx, req)
	outcome := outcomeFor(ctx, err)
	if err == nil && o.Queued {
		outcome = OutcomeQueued
	}
	s.opts.Observer.Placed(sn, outcome, time.Since(start))
	return o, err
}

// place is Place, which tells the observer how it went: it also returns
// the product's strategy, "" if it failed before it knew the product.
func (s *Service) place(ctx context.Context, req Request) (Order, strategy.Name, error) {
	// 1. Validate: bad input never reaches Redis or the database.
	if err := req.Validate(); err != nil {
		return Order{}, "", err
	}
	// 2. Load the product: its strategy, lock TTL and simulated latency.
	p, err := s.product(ctx, req.ProductID)
	if err != nil {
		return Order{}, "", err
	}
	// 2b. A redis-decr product asked for is swept (redisdecr.Seller.KeepSweeping),
	// sold out or not.
	if p.Strategy == strategy.RedisDecr && s.redisDecr != nil {
		s.redisDecr.KeepSweeping(p)
	}
	// 2c. A redis-queue product asked for has its consumer in this shop.
	if p.Strategy == strategy.RedisQueue && s.redisQueue != nil {
		s.redisQueue.KeepConsuming(p.ID)
	}
	// 2d. A product with a pay window has its unpaid orders swept.
	s.startSweep(p)
	// 2e. Sold out already, as this process has seen: answer at once.
	if s.soldOut(p.ID) {
		return Order{}, p.Strategy, fmt.Errorf("%w: %q (seen earlier)", ErrSoldOut, p.ID)
	}
	// 3. Sell the way the strategy says.
	var o Order
	switch p.Strategy {
	case strategy.SQLForUpdate:
		o, err = s.placeForUpdate(ctx, p, req)
	case strategy.SQLVersion:
		o, err = s.placeVersioned(ctx, p, req)
	case strategy.SQLAtomic:
		o, err = s.placeAtomic(ctx, p, req)
	case strategy.SQLOneTrip:
		o, err = s.placeOneTrip(ctx, p, req)
	case strategy.RedisDecr:
		o, err = s.placeDecr(ctx, p, req)
	case strategy.RedisQueue:
		o, err = s.placeQueued(ctx, p, req)
	default:
		o, err = s.placeLocked(ctx, p, req)
	}
	return o, p.Strategy, err
}

// placeAtomic is strategy sql-atomic: package sqlatomic sells it, after
// the business work, which needs no lock here: it runs before the
// transaction, beside the other buyers' instead of queued behind them.
func (s *Service) placeAtomic(ctx context.Context, p stock.Product, req Request) (Order, error) {
	if err := s.work(ctx, p); err != nil {
		return Order{}, fmt.Errorf("order: %w", err)
	}
	o := s.newOrder(p, req)
	if err := s.sqlAtomic.Place(ctx, p, o); err != nil {
		return Order{}, err
	}
	return o, nil
}

// placeDecr is strategy redis-decr: package redisdecr sells it.
func (s *Service) placeDecr(ctx context.Context, p stock.Product, req Request) (Order, error) {
	if s.redisDecr == nil {
		return Order{}, fmt.Errorf("order: strategy %s needs Options.RedisDecr", p.Strategy)
	}
	o := s.newOrder(p, req)
	if err := s.redisDecr.Place(ctx, p, o); err != nil {
		return Order{}, err
	}
	return o, nil
}

// newOrder returns the order req would place on p, with a fresh id,
// created now by this shop's clock (Options.Now).
func (s *Service) newOrder(p stock.Product, req Request) Order {
	return Order{
		ID:        uuid.NewString(),
		UserID:    req.UserID,
		ProductID: p.ID,
		Quantity:  req.Quantity,
		Strategy:  p.Strategy,
		CreatedAt: s.opts.Now().UTC().Truncate(time.Microsecond),
		PayWithin: p.PayWithin,
	}
}

// work is the simulated business latency of one order: the product's work,
// plus its stall with probability StallRate. It ends early, with ctx's
// error, if ctx ends (for the locking strategies ctx is the lock's, so a
// lost lock ends it).
func (s *Service) work(ctx context.Context, p stock.Product) error {
	d := p.Work
	if p.Stall > 0 && p.StallRate > 0 && s.opts.Rand() < p.StallRate {
		d += p.Stall
	}
	return s.opts.Sleep(ctx, d)
}
