package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeOneTrip is strategy sql-one-trip: sql-atomic's sale as one stored
// procedure (migrations/0023_place_one_trip.mysql.sql), sent as one CALL
// (orderdb.Writer.CallOneTrip), so the row stays locked for the server's
// time only, not for a round trip to the shop before the COMMIT. The server
// rolls back a sold-out or duplicate sale, and its answer tells which. On
// SQLite (in process, no procedures) it sells as sql-atomic does.
func (s *Service) placeOneTrip(ctx context.Context, p stock.Product, req Request) (Order, error) {
	// 1. The business work, before the sale, as sql-atomic's.
	if err := s.work(ctx, p); err != nil {
		return Order{}, fmt.Errorf("order: %w", err)
	}
	o := s.newOrder(p, req)
	// 2. No network, no procedure: sql-atomic's transaction (its late
	// commit included).
	if s.db.Dialector.Name() != "mysql" {
		if err := s.sqlAtomic.Sell(ctx, p, o); err != nil {
			return Order{}, err
		}
		return o, nil
	}
	// 3. The late-commit fault holds this COMMIT back in the server, the
	// row locked, as it holds sql-atomic's back in the shop.
	hold := s.lateHold(p)
	// 4. The sale, in one call: UPDATE, INSERT, COMMIT.
	left, err := s.writer.CallOneTrip(ctx, o, hold)
	switch {
	case errors.Is(err, orderdb.ErrNoUnits):
		if left == 0 {
			s.markSoldOut(p.ID)
		}
		return Order{}, fmt.Errorf("%w: %q has fewer than %d left", ErrSoldOut, p.ID, req.Quantity)
	case errors.Is(err, orderdb.ErrDuplicateKey):
		return Order{}, s.writer.Duplicate(ctx, p.ID, req.UserID)
	case err != nil:
		// 5. The answer lost: look the order up, and make "not there" final.
		if err := s.writer.AfterCallFailure(ctx, o, err); err != nil {
			return Order{}, orderdb.FromWrite(ctx, err)
		}
	}
	if hold > 0 {
		s.happened(p.ID, p.Strategy, EventLateCommit)
	}
	// 6. The last unit sold: the next buyer is answered at once.
	if left == 0 {
		s.markSoldOut(p.ID)
	}
	return o, nil
}

// lateHold is how long the late-commit fault holds this order's COMMIT
// back: p's LateCommit if isLate chooses it, else 0. The server holds
// back only a COMMIT that sells: the event is counted once one did.
func (s *Service) lateHold(p stock.Product) time.Duration {
	if !s.isLate(p) {
		return 0
	}
	return p.LateCommit
}
