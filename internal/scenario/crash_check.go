package scenario

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// settleCrash is a --crash attack's last step, after its audit: it waits
// up to crashDriftWithin for redis-decr's drift to read 0, keeping the
// last audit it read in res.Audit, then checks every order the buyers were
// told they have against the database (answeredWithoutOrder).
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
			var au Audit
			if au, err = a.api.audit(ctx, a.productID); err == nil {
				res.Audit = au
			}
			return err != nil
		})
		if err != nil {
			return err
		}
		c.DriftWaited = time.Since(start)
	}
	c.Answered, c.WithoutOrder = answeredWithoutOrder(ctx, a.fleet.procs, a.productID, res.Results)
	return nil
}

// answeredWithoutOrder counts the 201 and 202 answers in results that
// named an order, and those whose order has no row in the product's
// orders: a sale the buyer was told of and the database does not have.
// The second is -1 if the database could not be read.
func answeredWithoutOrder(ctx context.Context, procs *shopProcs, productID string, results vegeta.Results) (answered, without int) {
	var ids []string
	for _, r := range results {
		if r.Code != http.StatusCreated && r.Code != http.StatusAccepted {
			continue
		}
		if id := orderID(r.Body); id != "" {
			ids = append(ids, id)
		}
	}
	var rows []string
	err := procs.db.WithContext(ctx).Raw("SELECT id FROM orders WHERE product_id = ?", productID).Scan(&rows).Error
	if err != nil {
		return len(ids), -1
	}
	have := make(map[string]bool, len(rows))
	for _, id := range rows {
		have[id] = true
	}
	for _, id := range ids {
		if !have[id] {
			without++
		}
	}
	return len(ids), without
}

// orderID is the order's id in a 201 or 202 answer's body: "id", or
// "order_id"; "" if neither is there.
func orderID(body []byte) string {
	var o struct {
		ID      string `json:"id"`
		OrderID string `json:"order_id"`
	}
	if json.Unmarshal(body, &o) != nil {
		return ""
	}
	if o.ID != "" {
		return o.ID
	}
	return o.OrderID
}
