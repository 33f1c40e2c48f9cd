package order

import (
	"context"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
)

// sweepNaive is the expiry the textbook warns about (Options.NaiveExpiry,
// for the workshop): it reads the orders due by this shop's own clock, then
// writes each one expired and gives its unit back, with no compare-and-set
// in between. A payment landing in between is overwritten, two sweeps both
// give the unit back, and a clock running ahead expires orders early.
// Sweep (sweep.go) is the one that holds.
func (s *Service) sweepNaive(ctx context.Context) (int, error) {
	due, err := s.naiveDue(ctx)
	if err != nil {
		return 0, err
	}
	return s.naiveExpire(ctx, due)
}

// naiveDue is the naive sweep's read: the pending orders due by this
// shop's clock.
func (s *Service) naiveDue(ctx context.Context) ([]life.Order, error) {
	var due []life.Order
	rows, err := s.db.WithContext(ctx).Raw(`SELECT id, user_id, product_id, quantity, bucket FROM orders
		WHERE state = 'pending' AND deadline_ms <= ? LIMIT ?`, s.opts.Now().UnixMilli(), sweepBatch).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var o life.Order
		if err := rows.Scan(&o.ID, &o.UserID, &o.ProductID, &o.Quantity, &o.Bucket); err != nil {
			return nil, err
		}
		due = append(due, o)
	}
	return due, rows.Err()
}

// naiveExpire is the naive sweep's write: each order of due expired and
// its unit given back, whatever the order's state is by now.
func (s *Service) naiveExpire(ctx context.Context, due []life.Order) (int, error) {
	expired := 0
	for _, o := range due {
		p, err := s.product(ctx, o.ProductID)
		if err != nil {
			return expired, err
		}
		err = s.giveBack(ctx, p, func(tx *gorm.DB) error {
			// The flaw: no "AND state = 'pending'", no deadline check.
			if err := tx.Exec(`UPDATE orders SET state = 'expired', unique_buyer = NULL WHERE id = ?`, o.ID).Error; err != nil {
				return err
			}
			return s.give(tx, p, o)
		})
		if err != nil {
			return expired, err
		}
		s.payRedis(ctx, p, []life.Order{o})
		s.ended(p, o, EventExpired)
		expired++
	}
	return expired, nil
}
