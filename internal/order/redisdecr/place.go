package redisdecr

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// Place places order o of product p (strategy redis-decr) and returns nil
// once o is written: reserved in Redis, then written in a group commit
// (group.go; the SQL is in reclaim.go), or the reservation given back if
// the write fails. A shop that dies in between leaves its reservation to
// the sweep (reclaim.go), and the database refuses that order should the
// shop come back with it.
//
// Errors, o not written: stock.ErrSoldOut; a *orderdb.DuplicateOrderError;
// orderdb.ErrDuplicateRequest while the buyer's other click is on its way;
// stock.ErrUnavailable (Redis or the database unreachable, or the sweep
// gave the reservation back first); one wrapping ctx.Err(). And
// orderdb.ErrInDoubt when the COMMIT's fate is unknown: o may exist (settle
// gives its units back if it does not). Safe for concurrent use.
func (s *Seller) Place(ctx context.Context, p stock.Product, o orderdb.Order) error {
	s.know(p)
	// 0. What the database says of the sweep's reclaims before the
	// reservation exists (reclaim.go).
	seen, err := s.reclaimsSeen(ctx, p.ID)
	if err != nil {
		return orderdb.FromWrite(ctx, err)
	}
	// 1. Reserve in Redis: in the product's stock, or in the first of its
	// buckets that has the units, the buyer's home first (buckets.go).
	if o, err = s.reserveAny(ctx, p, o); err != nil {
		return err
	}
	// 2. The business work, outside any lock. Nothing was sent to the
	// database if it ends early: the units go straight back.
	if err := s.opts.Work(ctx, p); err != nil {
		s.giveBack(ctx, o)
		return fmt.Errorf("order: %w", err)
	}
	// 3. Write the order and take the units in the database, unless the
	// sweep gave the reservation back first (writeReserved, reclaim.go):
	// with the orders of other buyers in one transaction (group.go), or
	// alone if the database refused that group.
	err = s.writeGrouped(ctx, p, o, seen)
	if errors.Is(err, errWriteAlone) {
		err = s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
			return s.writeReserved(tx, o, seen)
		})
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errLeftEarly):
		// The buyer left before the write: nothing was sent.
		s.giveBack(ctx, o)
		return orderdb.FromWrite(ctx, err)
	case errors.Is(err, errReclaimed):
		// This shop was too slow: the units are back on sale. Giving back
		// again is a no-op, or finishes a sweep that died after its
		// commit.
		s.giveBack(ctx, o)
		return fmt.Errorf("%w: %w", stock.ErrUnavailable, err)
	case errors.Is(err, orderdb.ErrDuplicateKey):
		// The database has an order of this buyer that Redis forgot.
		s.giveBack(ctx, o)
		return s.w.Duplicate(ctx, p.ID, o.UserID)
	case errors.Is(err, orderdb.ErrNoUnits):
		// Redis offered a unit the database does not have (Redis lost its data
		// and was loaded again): the database wins, Redis comes down to it.
		s.giveBack(ctx, o)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orderdb.ReleaseTimeout)
		if err := s.lowerToDatabase(lctx, p.ID); err != nil {
			s.opts.Logger.WarnContext(ctx, "lower the redis stock to the database's; the next sweep will", "product", p.ID, "err", err)
		}
		cancel()
		return fmt.Errorf("%w: %q: the database has fewer units than Redis had", stock.ErrSoldOut, p.ID)
	}
	// 4. The write failed, and its COMMIT may have landed (its answer may
	// be what was lost): the units are given back only once the database
	// says the order is not there.
	if err = s.w.AfterFailure(ctx, o, err); err == nil {
		return nil
	}
	s.settle(o)
	return orderdb.FromWrite(ctx, err)
}

// reserve takes o's units in Redis, from its bucket's stock if it has
// one (o.Bucket), held for s.hold(p) before the sweep may reclaim them. A
// stock Redis does not have is loaded from the database first
// (LoadIfMissing, with its row's stock and the returns it counts), once.
func (s *Seller) reserve(ctx context.Context, p stock.Product, o orderdb.Order) error {
	res, name := s.res, s.nameOf(o)
	hold := s.hold(p)
	_, err := res.Take(ctx, name, o.UserID, o.ID, o.Quantity, hold)
	if errors.Is(err, stock.ErrNotLoaded) {
		left, owed, rerr := s.databaseStock(ctx, o)
		if rerr != nil {
			return orderdb.FromWrite(ctx, rerr)
		}
		if _, lerr := res.LoadIfMissing(ctx, name, left, owed...); lerr != nil {
			err = lerr
		} else {
			_, err = res.Take(ctx, name, o.UserID, o.ID, o.Quantity, hold)
		}
	}
	var dup *redisstock.DuplicateError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, stock.ErrSoldOut), errors.Is(err, redisstock.ErrFull):
		// Redis answered: nothing was reserved, nothing to give back.
		return err
	case errors.As(err, &dup):
		// An order, or a click still on its way (or being settled): the
		// database tells which.
		if found, qerr := s.w.Landed(ctx, dup.Reservation); qerr == nil && found {
			return &orderdb.DuplicateOrderError{OrderID: dup.Reservation, UserID: o.UserID, ProductID: p.ID}
		}
		return fmt.Errorf("%w: %w", orderdb.ErrDuplicateRequest, err)
	}
	// Redis did not answer, or ctx ended: the script may have run. Give the
	// reservation back to be sure; it is given back only if it was made.
	s.giveBack(ctx, o)
	if ctx.Err() != nil {
		return fmt.Errorf("order: reserve: %w", err)
	}
	return fmt.Errorf("%w: %w", stock.ErrUnavailable, err)
}

// lowerToDatabase brings product's Redis stock down to the database's
// (never up; per bucket: lowerBuckets) and remembers a sold-out product:
// the one step of the order flow, after the database refused a unit Redis
// offered, and of the sweep. The returns counter is read before the
// database, so a return in between leaves Redis be. Errors: Redis's, the
// read's, or Lower's (stock.ErrNotLoaded, redisstock.ErrReturned).
func (s *Seller) lowerToDatabase(ctx context.Context, product string) error {
	if k := s.bucketsOf(product); k >= 2 {
		return s.lowerBuckets(ctx, product, k)
	}
	returns, err := s.res.Returns(ctx, product)
	if err != nil {
		return err
	}
	left, err := orderdb.ReadStock(ctx, s.db, product)
	if err != nil {
		return err
	}
	if left == 0 {
		s.opts.SoldOut(product)
	}
	s.afterRead(product)
	_, err = s.res.Lower(ctx, product, left, returns)
	return err
}

// giveBack gives o's reservation back now, on a context that survives the
// caller's; if Redis does not answer, settle keeps trying.
func (s *Seller) giveBack(ctx context.Context, o orderdb.Order) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orderdb.ReleaseTimeout)
	defer cancel()
	if err := s.tryGiveBack(ctx, o); err != nil {
		s.settle(o)
	}
}

// tryGiveBack is one GiveBack of o, to the stock it was taken from (its
// bucket's, if it has one), counted.
func (s *Seller) tryGiveBack(ctx context.Context, o orderdb.Order) error {
	held, err := s.res.GiveBack(ctx, s.nameOf(o), o.UserID, o.ID, o.Quantity)
	if err == nil && held {
		s.opts.GivenBack(o.ProductID)
	}
	return err
}
