package redisdecr

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/order/orderdb"
)

// How settle retries: it waits settleGrace before it first asks the
// database (so that a COMMIT still on its way has landed), then asks, and
// gives back, with a pause growing to settleMaxPause, for at most
// settleFor in all.
const (
	settleGrace    = time.Second
	settleMaxPause = 5 * time.Second
	settleFor      = 2 * time.Minute
)

// settle finishes, in the background, a reservation whose order failed in
// doubt: once the database says the order is not there, the units go back
// to Redis (if it is, they stay sold); it keeps trying for settleFor, then
// logs and leaves the reservation (the audit's drift shows it). Meanwhile
// the buyer's next click is told duplicate_request. Close waits for it.
func (s *Seller) settle(o orderdb.Order) {
	s.settling.Add(1)
	go func() {
		defer s.settling.Done()
		ctx, cancel := context.WithTimeout(s.stopping, settleFor)
		defer cancel()
		pause := settleGrace
		var err error
		for {
			if orderdb.Sleep(ctx, pause) != nil {
				break
			}
			pause = min(2*pause, settleMaxPause)
			var found bool
			if found, err = s.w.Settled(ctx, o); err != nil {
				continue
			}
			if found {
				return // it was sold after all
			}
			if err = s.tryGiveBack(ctx, o); err == nil {
				return
			}
		}
		s.opts.Logger.Error("settle a reservation: given up; the audit's drift shows it",
			"product", o.ProductID, "user", o.UserID, "order", o.ID, "quantity", o.Quantity, "err", err)
	}()
}
