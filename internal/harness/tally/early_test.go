package tally_test

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

func TestEarlySoldOut(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	soldOut := []byte(`{"error":{"code":"sold_out","message":"x"}}`)
	created := func(sent int) vegeta.Result {
		return vegeta.Result{Code: 201, Timestamp: at(sent), Latency: 5 * time.Millisecond}
	}
	refused := func(sent, took int) vegeta.Result {
		return vegeta.Result{Code: 409, Body: soldOut, Timestamp: at(sent), Latency: time.Duration(took) * time.Millisecond}
	}
	on := func(attack string, r vegeta.Result) vegeta.Result { r.Attack = attack; return r }
	for _, c := range []struct {
		name    string
		results []vegeta.Result
		want    int
	}{
		{"sold out after the last order", []vegeta.Result{created(0), created(10), refused(11, 2)}, 0},
		{"sold out crossing the last order in flight", []vegeta.Result{created(10), refused(5, 6)}, 0},
		{"sold out answered before the last order was sent", []vegeta.Result{refused(0, 3), created(10), refused(1, 20)}, 1},
		{"no order at all", []vegeta.Result{refused(0, 1)}, 0},
		{"two generators' clocks are not compared", []vegeta.Result{on("part 1", refused(0, 3)), on("part 2", created(10)), on("part 2", refused(20, 1))}, 0},
		{"each generator's own are", []vegeta.Result{on("part 1", refused(0, 3)), on("part 1", created(10)), on("part 2", created(10))}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tally.EarlySoldOut(c.results); got != c.want {
				t.Errorf("EarlySoldOut: got %d, want %d", got, c.want)
			}
		})
	}
}
