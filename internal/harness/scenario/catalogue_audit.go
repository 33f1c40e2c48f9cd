package scenario

import (
	"context"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// auditCatalogue audits each of a catalogue row's products as a row of
// one product is audited, from that product's answers alone
// (tally.ByProduct): its queue drained, the shop's audit of it, its
// early sold-out answers (bucketed stock), its answered orders not
// written, its events. It fills res.Products, hottest first, and sets
// the row's Audit, Events, Lost, EarlySoldOut and Drain to their sums:
// the drain took as long as the slowest product's, and its first error
// is kept. tick is called at every poll of a drain. It returns ctx's end
// or a shop's error, with res filled as far as it got.
func (a *attack) auditCatalogue(ctx context.Context, res *StrategyResult, tick func()) error {
	by := tally.ByProduct(res.Results, a.products)
	res.Products = make([]tally.ProductFigures, len(a.products))
	audits := make([]tally.Audit, 0, len(a.products))
	res.Events = tally.Events{}
	for i, id := range a.products {
		p := &res.Products[i]
		p.ID = id
		p.Buyers, p.Clicks = a.crowd.share(i)
		rs := by[id]
		for j := range rs {
			p.Tally.Add(&rs[j])
		}
		if a.strategy.Name().Queues() {
			d, err := tally.WaitDrain(ctx, a.api, id, a.drainFrom(rs), tick)
			if err != nil {
				return err
			}
			res.Drain = slowerDrain(res.Drain, d)
		}
		var err error
		if p.Audit, err = a.api.Audit(ctx, id); err != nil {
			return err
		}
		if len(p.Audit.Buckets) > 0 {
			p.EarlySoldOut = tally.EarlySoldOut(rs)
		}
		if p.Lost, err = tally.Unwritten(ctx, a.lookups(), rs); err != nil {
			return err
		}
		e, err := a.events(ctx, id)
		if err != nil {
			return err
		}
		res.Events.Add(e)
		res.Lost += p.Lost
		res.EarlySoldOut += p.EarlySoldOut
		audits = append(audits, p.Audit)
		res.Audit = tally.SumAudits(audits)
	}
	return nil
}

// slowerDrain is the drain of two products' queues together: the longer
// wait, and the first error either met.
func slowerDrain(a, b *tally.Drain) *tally.Drain {
	if a == nil {
		return b
	}
	out := &tally.Drain{Took: max(a.Took, b.Took), Err: a.Err}
	if out.Err == "" {
		out.Err = b.Err
	}
	return out
}
