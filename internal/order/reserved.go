package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/sale"
	"github.com/flashsale/flashsale/internal/reserve"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeReserved is strategy redis-decr, the way most production flash
// sales sell a hot product: no lock; the stock lives in Redis as well, and
// one script per order (package reserve) answers sold out, duplicate
// buyer, or reserved, in one round trip. Only reserved buyers reach the
// database, where the order row and the stock change are written in one
// transaction, with those of the other buyers reserved meanwhile (a group
// commit, reserved_group.go). If that write fails, the reservation is given back, so a
// failed order never leaves a unit sold in Redis and never in SQL.
//
// The script checks the buyer before it decrements, never after: a
// repeated click must be refused without taking a unit. The database keeps
// its own guards (the unique key, the conditional UPDATE), so a Redis that
// lost its data cannot oversell it either.
//
// A shop that dies between the two steps cannot give its reservation back;
// the sweep does, once the reservation's hold has run out with no order
// written (reserved_reclaim.go), and the database refuses the order of a
// reservation given back that way, should its shop come back with it
// (writeReserved): the buyer is told ErrUnavailable, never 201.
func (s *Service) placeReserved(ctx context.Context, p stock.Product, req Request) (Order, error) {
	if s.opts.Reservations == nil {
		return Order{}, fmt.Errorf("order: strategy %s needs Options.Reservations", p.Strategy)
	}
	o := newOrder(p, req)
	// 0. What the database says of the sweep's reclaims before the
	// reservation exists (reserved_write.go).
	seen, err := s.reclaimsSeen(ctx, p.ID)
	if err != nil {
		return Order{}, sale.FromWrite(ctx, err)
	}
	// 1. Reserve in Redis.
	if err := s.reserve(ctx, p, o); err != nil {
		return Order{}, err
	}
	// 2. The business work, outside any lock. Nothing was sent to the
	// database if it ends early: the units go straight back.
	if err := s.work(ctx, p); err != nil {
		s.giveBack(ctx, o)
		return Order{}, fmt.Errorf("order: %w", err)
	}
	// 3. Write the order and take the units in the database, unless the
	// sweep gave the reservation back first: with the orders of other
	// buyers in one transaction (reserved_group.go), or alone if the
	// database refused that group.
	err = s.writeGrouped(ctx, p, o, seen)
	if errors.Is(err, errWriteAlone) {
		err = s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
			return s.writeReserved(tx, o, seen)
		})
	}
	switch {
	case err == nil:
		return o, nil
	case errors.Is(err, errLeftEarly):
		// The buyer left before the write: nothing was sent.
		s.giveBack(ctx, o)
		return Order{}, sale.FromWrite(ctx, err)
	case errors.Is(err, errReclaimed):
		// This shop was too slow: the units are back on sale. Giving back
		// again is a no-op, or finishes a sweep that died after its
		// commit.
		s.giveBack(ctx, o)
		return Order{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.Is(err, sale.ErrDuplicateKey):
		// The database has an order of this buyer that Redis forgot.
		s.giveBack(ctx, o)
		return Order{}, s.w.Duplicate(ctx, p.ID, req.UserID)
	case errors.Is(err, sale.ErrNoUnits):
		// Redis offered a unit the database does not have: they drifted
		// apart (Redis lost its data and was loaded again mid-sale). The
		// database wins: Redis comes down to it.
		s.giveBack(ctx, o)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sale.ReleaseTimeout)
		if err := s.lowerToDatabase(lctx, p.ID); err != nil {
			s.opts.Logger.WarnContext(ctx, "lower the redis stock to the database's; the next sweep will", "product", p.ID, "err", err)
		}
		cancel()
		return Order{}, fmt.Errorf("%w: %q: the database has fewer units than Redis had", ErrSoldOut, p.ID)
	}
	// 4. The write failed, and its COMMIT may have landed (its answer may
	// be what was lost): the units are given back only once the database
	// says the order is not there.
	if err = s.w.AfterFailure(ctx, o, err); err == nil {
		return o, nil
	}
	s.settle(o)
	return Order{}, sale.FromWrite(ctx, err)
}

// reserve takes o's units in Redis, held for s.hold(p) before the sweep
// may reclaim them. A stock Redis does not have is loaded from the
// database first (LoadIfMissing), once.
func (s *Service) reserve(ctx context.Context, p stock.Product, o Order) error {
	res := s.opts.Reservations
	hold := s.hold(p)
	_, err := res.Take(ctx, p.ID, o.UserID, o.ID, o.Quantity, hold)
	if errors.Is(err, reserve.ErrNotLoaded) {
		left, rerr := sale.ReadStock(ctx, s.db, p.ID)
		if rerr != nil {
			return sale.FromWrite(ctx, rerr)
		}
		if _, lerr := res.LoadIfMissing(ctx, p.ID, left); lerr != nil {
			err = lerr
		} else {
			_, err = res.Take(ctx, p.ID, o.UserID, o.ID, o.Quantity, hold)
		}
	}
	var dup *reserve.DuplicateError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, reserve.ErrSoldOut):
		return fmt.Errorf("%w: %w", ErrSoldOut, err)
	case errors.Is(err, reserve.ErrFull):
		// Redis answered: nothing was reserved, nothing to give back.
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.As(err, &dup):
		// An order, or a click still on its way (or being settled): the
		// database tells which.
		if found, qerr := s.w.Landed(ctx, dup.Reservation); qerr == nil && found {
			return &DuplicateOrderError{OrderID: dup.Reservation, UserID: o.UserID, ProductID: p.ID}
		}
		return fmt.Errorf("%w: %w", ErrDuplicateRequest, err)
	}
	// Redis did not answer, or ctx ended: the script may have run. Give the
	// reservation back to be sure; it is given back only if it was made.
	s.giveBack(ctx, o)
	if ctx.Err() != nil {
		return fmt.Errorf("order: reserve: %w", err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// lowerToDatabase brings the Redis stock of product down to the
// database's (never up: reserve.Stock.Lower), and remembers a product the
// database has sold out of. It is the one step both the order flow, after
// the database refused a unit Redis offered, and the sweep (reserved_reconcile.go)
// take. Errors: the database's read, or Lower's (reserve.ErrNotLoaded when
// Redis has no stock for product: nothing to lower).
func (s *Service) lowerToDatabase(ctx context.Context, product string) error {
	left, err := sale.ReadStock(ctx, s.db, product)
	if err != nil {
		return err
	}
	if left == 0 {
		s.markSoldOut(product)
	}
	_, err = s.opts.Reservations.Lower(ctx, product, left)
	return err
}

// giveBack gives o's reservation back now, on a context that survives the
// caller's; if Redis does not answer, settle keeps trying.
func (s *Service) giveBack(ctx context.Context, o Order) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sale.ReleaseTimeout)
	defer cancel()
	if err := s.tryGiveBack(ctx, o); err != nil {
		s.settle(o)
	}
}

// tryGiveBack is one GiveBack of o, counted.
func (s *Service) tryGiveBack(ctx context.Context, o Order) error {
	held, err := s.opts.Reservations.GiveBack(ctx, o.ProductID, o.UserID, o.ID, o.Quantity)
	if err == nil && held {
		s.happened(o.ProductID, o.Strategy, EventGivenBack)
	}
	return err
}
