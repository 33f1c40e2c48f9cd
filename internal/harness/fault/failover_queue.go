package fault

import (
	"context"
	"sync"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// What failovers cost redis-queue's buyers. The stream of accepted orders
// and the stock counter live on the master; an order it queued after the
// link was held is on the master alone. If a consumer wrote it before the
// kill, it stands, but the promoted counter still offers its unit: a later
// buyer is queued for it and refused by the database (sold out), after a
// 202. If no consumer had written it, it is gone with the master: its
// buyer was told 202 and no shop knows the order.

// FailoverQueue counts where the orders a queued row answered 202 stand
// once its queue drained.
type FailoverQueue struct {
	// Answered counts the 202s; Created those written; Refused those the
	// database refused after the 202; Unknown those no shop knows (lost
	// with a master).
	Answered, Created, Refused, Unknown int
}

// Settle asks a shop, for a queued row, where every order answered 202
// stands, and records it in the failover's record. It is called after
// the drain and the audit, from the attack's goroutine.
func (fo *failingOver) Settle(ctx context.Context, _ *tally.Audit, _ int) error {
	if fo.rec == nil || !fo.attack.Strategy.Queues() {
		return nil
	}
	ids := tally.AcceptedIDs(fo.results)
	q := &FailoverQueue{Answered: len(ids)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range min(8, len(ids)) {
		wg.Go(func() {
			for id := range work {
				st, err := fo.attack.Shop.OrderStatus(ctx, id)
				mu.Lock()
				switch {
				case err != nil:
				case st == "created":
					q.Created++
				case st == "refused":
					q.Refused++
				case st == "unknown":
					q.Unknown++
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	fo.rec.Queue = q
	return ctx.Err()
}
