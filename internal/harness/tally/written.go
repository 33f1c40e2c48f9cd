package tally

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// confirmWorkers is how many order lookups Unwritten sends at once.
const confirmWorkers = 16

// confirmTries is how many times Unwritten asks about an order whose lookup
// failed (no answer, or not a 200 or 404) before it counts it as lost: a
// shop still working off an overload's backlog may refuse a connection
// for a moment.
const confirmTries = 4

// OrderLookup says where one order stands (GET /api/v1/orders/{id}):
// "created", "queued", "refused", or "unknown". Implementations must be
// safe for concurrent use.
type OrderLookup interface {
	OrderStatus(ctx context.Context, id string) (string, error)
}

// Unwritten asks the shops, after the drain, where every order a buyer was
// told it has (a 201 or a 202) stands, and returns how many are not
// written: lost (unknown to every shop) or refused after a 202. A safe
// strategy loses none. Lookups are spread over shops, which must not be
// empty; a lookup that fails is asked again, up to confirmTries times, and
// counts as lost only if ctx is still alive, and ctx's end is returned.
func Unwritten(ctx context.Context, shops []OrderLookup, results vegeta.Results) (int, error) {
	ids := AcceptedIDs(results)
	work := make(chan string)
	var mu sync.Mutex
	lost := 0
	var wg sync.WaitGroup
	for w := range min(confirmWorkers, len(ids)) {
		api := shops[w%len(shops)]
		wg.Go(func() {
			for id := range work {
				st, err := api.OrderStatus(ctx, id)
				for try := 1; err != nil && try < confirmTries && ctx.Err() == nil; try++ {
					t := time.NewTimer(time.Duration(try) * 250 * time.Millisecond)
					select {
					case <-t.C:
					case <-ctx.Done():
					}
					t.Stop()
					st, err = api.OrderStatus(ctx, id)
				}
				if (err != nil && ctx.Err() == nil) || (err == nil && st != "created") {
					mu.Lock()
					lost++
					mu.Unlock()
				}
			}
		})
	}
	for _, id := range ids {
		select {
		case work <- id:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return lost, ctx.Err()
}

// AcceptedIDs are the order ids of the 201s and 202s in results.
func AcceptedIDs(results vegeta.Results) []string {
	var ids []string
	for _, r := range results {
		if r.Code != http.StatusCreated && r.Code != http.StatusAccepted {
			continue
		}
		var o struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(r.Body, &o) == nil && o.ID != "" {
			ids = append(ids, o.ID)
		}
	}
	return ids
}
