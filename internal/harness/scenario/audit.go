package scenario

import (
	"context"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/why"
)

// audit reads the fleet's account of res's attack once its last answer
// is in: each product's queue drained, the shop's audit, the answered
// orders not written, the events, and what the faults settle; then the
// why-line. tick is called at every poll of a drain. It returns ctx's
// end or a shop's error, with res filled as far as it got.
func (a *attack) audit(ctx context.Context, res *StrategyResult, faults []fault.Armed, tick func()) error {
	s := a.settings
	if len(a.products) > 1 {
		if err := a.auditCatalogue(ctx, res, tick); err != nil {
			return err
		}
		res.Why = why.Line(whyRow(s, res))
		return nil
	}
	var err error
	if a.strategy.Name().Queues() {
		// The orders are written behind the answers: the audit waits for
		// the queue to drain.
		if res.Drain, err = tally.WaitDrain(ctx, a.api, a.productID, a.drainFrom(res.Results), tick); err != nil {
			return err
		}
	}
	if s.Paying() {
		// The units of unpaid orders come back: the audit waits for the
		// sale's end, when no order is pending.
		if _, err := a.waitSaleEnd(ctx, a.productID, tick); err != nil {
			return err
		}
	}
	if res.Audit, err = a.api.Audit(ctx, a.productID); err != nil {
		return err
	}
	if len(res.Audit.Buckets) > 0 {
		res.EarlySoldOut = tally.EarlySoldOut(res.Results)
	}
	if res.Lost, err = tally.Unwritten(ctx, a.lookups(), res.Results); err != nil {
		return err
	}
	for _, f := range faults {
		if st, ok := f.(settler); ok {
			if err := st.Settle(ctx, &res.Audit, res.Lost); err != nil {
				return err
			}
		}
	}
	if res.Events, err = a.events(ctx, a.productID); err != nil {
		return err
	}
	res.Why = why.Line(whyRow(s, res))
	return nil
}
