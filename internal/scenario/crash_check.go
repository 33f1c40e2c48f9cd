package scenario

import (
	"context"
	"github.com/flashsale/flashsale/internal/ledger"
	"time"
)

// settleCrash is a --crash attack's last step, after its audit: it waits
// up to crashDriftWithin for redis-decr's drift to read 0, keeping the
// last audit it read in res.Audit, and records how many orders the buyers
// were told they have, and how many of those were not written (res.Lost,
// which confirm counted).
func (a *attack) settleCrash(ctx context.Context, res *ModeResult) error {
	c := res.Crash
	if res.Audit.Drift != nil {
		start := time.Now()
		end := start.Add(crashDriftWithin)
		var err error
		pollEvery(ctx, nil, driftEvery, func() bool {
			if res.Audit.Drift == nil || *res.Audit.Drift == 0 || !time.Now().Before(end) {
				return true
			}
			var au ledger.Audit
			if au, err = a.api.Audit(ctx, a.productID); err == nil {
				res.Audit = au
			}
			return err != nil
		})
		if err != nil {
			return err
		}
		c.DriftWaited = time.Since(start)
	}
	c.Answered, c.WithoutOrder = len(ledger.AcceptedIDs(res.Results)), res.Lost
	return nil
}
