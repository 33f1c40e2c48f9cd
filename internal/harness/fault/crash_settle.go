package fault

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// Settle is a --crash attack's last step, after its audit: it waits up to
// crashDriftWithin for redis-decr's drift to read 0, keeping the last
// audit it read in au, and records how many orders the buyers were told
// they have, and how many of those were not written (lost, which
// tally.Unwritten counted). It is called after Stop returned no error,
// from the same goroutine; only ctx's end or a shop that does not answer
// is an error.
func (sc *crashing) Settle(ctx context.Context, au *tally.Audit, lost int) error {
	c := sc.rec
	if au.Drift != nil {
		start := time.Now()
		end := start.Add(crashDriftWithin)
		var err error
		pollEvery(ctx, nil, driftEvery, func() bool {
			if au.Drift == nil || *au.Drift == 0 || !time.Now().Before(end) {
				return true
			}
			var next tally.Audit
			if next, err = sc.attack.Shop.Audit(ctx, sc.attack.Product); err == nil {
				*au = next
			}
			return err != nil
		})
		if err != nil {
			return err
		}
		c.DriftWaited = time.Since(start)
		if au.Drift != nil {
			d := *au.Drift
			c.Drift = &d
		}
	}
	c.Answered, c.WithoutOrder = len(tally.AcceptedIDs(sc.results)), lost
	return nil
}
