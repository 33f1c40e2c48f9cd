package live_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/live"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// state reads b's state as a page does, from GET /state.
func state(t *testing.T, b *live.Board) live.State {
	t.Helper()
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET /state: Content-Type %q, want application/json", ct)
	}
	var st live.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func int64p(n int64) *int64 { return &n }

// TestQueueBacklog: a queued strategy's row shows the orders accepted and not
// written (the queue's length) and, of them, those no consumer has read
// (the lag); a strategy without a queue shows neither, not zeros.
func TestQueueBacklog(t *testing.T) {
	for _, tc := range []struct {
		name             string
		length, pending  *int64
		wantLen, wantLag *int64
	}{
		{"no queue", nil, nil, nil, nil},
		{"some read", int64p(40), int64p(15), int64p(40), int64p(25)},
		{"none read", int64p(40), nil, int64p(40), int64p(40)},
		{"pending counted past the length", int64p(5), int64p(9), int64p(5), int64p(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := live.NewBoard("t", []scenario.Strategy{"redis-queue"})
			b.Watch(scenario.Snapshot{Strategy: "redis-queue",
				Audit: &tally.Audit{QueueLength: tc.length, QueuePending: tc.pending}})
			r := state(t, b).Rows[0]
			if !equal(r.QueueLength, tc.wantLen) || !equal(r.QueueLag, tc.wantLag) {
				t.Errorf("queue length %s, lag %s; want %s, %s", show(r.QueueLength), show(r.QueueLag), show(tc.wantLen), show(tc.wantLag))
			}
		})
	}
}

func equal(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

func show(p *int64) string {
	if p == nil {
		return "null"
	}
	data, _ := json.Marshal(*p)
	return string(data)
}

// TestWatchRow: a snapshot's figures reach its own row, latencies in
// milliseconds, and the attack's last snapshot marks the row done; the
// other rows wait untouched.
func TestWatchRow(t *testing.T) {
	b := live.NewBoard("t", []scenario.Strategy{"lua", "fenced"})
	b.Watch(scenario.Snapshot{Strategy: "fenced", Planned: 100, Sent: 100, Created: 9, SoldOut: 80, Unavailable: 11,
		P50: 1500 * time.Microsecond, P99: 2 * time.Second, Done: true,
		Audit: &tally.Audit{InitialStock: 10, Stock: 1, Sold: 9}})
	st := state(t, b)
	if r := st.Rows[0]; r.Strategy != "lua" || r.State != "waiting" || r.Sent != 0 {
		t.Errorf("lua: %+v, want it waiting, untouched", r)
	}
	r := st.Rows[1]
	if r.Strategy != "fenced" || r.State != "done" || r.Created != 9 || r.SoldOut != 80 || r.Unavailable != 11 {
		t.Errorf("fenced: %+v, want done with the snapshot's answers", r)
	}
	if r.P50 != 1.5 || r.P99 != 2000 {
		t.Errorf("fenced latencies: p50 %v ms, p99 %v ms; want 1.5 and 2000", r.P50, r.P99)
	}
	if r.UnitsLeft == nil || *r.UnitsLeft != 1 || r.Sold != 9 || r.InitialStock != 10 {
		t.Errorf("fenced audit: %+v, want 1 of 10 left, 9 sold", r)
	}
}

// TestFinishStates: at the end a strategy the run left running says
// "stopped", one it never reached "not run", and a strategy that finished
// shows the report's figures, its 503s from the answers' statuses.
func TestFinishStates(t *testing.T) {
	b := live.NewBoard("t", []scenario.Strategy{"lua", "fenced", "etcd"})
	b.Watch(scenario.Snapshot{Strategy: "fenced", Sent: 3})
	done := report.StrategyDoc{Strategy: "lua", Sent: 20, Why: "a reason",
		Audit:   tally.Audit{ProductID: "p", InitialStock: 10, Stock: 0, Sold: 10},
		Answers: tally.Answers{Status: map[int]int{201: 10, 503: 4}}}
	b.Finish(report.Document{Strategies: []report.StrategyDoc{done}}, nil)
	st := state(t, b)
	if !st.Done || st.Err != "" {
		t.Errorf("done %v, error %q; want done without an error", st.Done, st.Err)
	}
	want := map[string]string{"lua": "done", "fenced": "stopped", "etcd": "not run"}
	for _, r := range st.Rows {
		if r.State != want[r.Strategy] {
			t.Errorf("%s: state %q, want %q", r.Strategy, r.State, want[r.Strategy])
		}
	}
	if r := st.Rows[0]; r.Unavailable != 4 || r.Why != "a reason" || r.UnitsLeft == nil || *r.UnitsLeft != 0 {
		t.Errorf("lua: %+v, want 4 503s, its why, 0 left", r)
	}
}

// TestLife: in a sale with payments a row shows its units paid, pending,
// expired and resold from the audit and those returned from the fleet's
// events, its undersold ones once it is done, and at the end the
// report's; a row without a pay window shows none of them, not zeros.
func TestLife(t *testing.T) {
	b := live.NewBoard("t", []scenario.Strategy{"sql-atomic", "lua"})
	b.Watch(scenario.Snapshot{Strategy: "lua", Audit: &tally.Audit{InitialStock: 10, Stock: 4, Sold: 6}})
	b.Watch(scenario.Snapshot{Strategy: "sql-atomic",
		Audit: &tally.Audit{InitialStock: 10, Stock: 1, Sold: 9, Life: &tally.Life{Paid: 5, Pending: 4, Expired: 2, Resold: 1, Undersold: 1}}})
	st := state(t, b)
	if l := st.Rows[0].Life; l == nil || l.Paid != 5 || l.Pending != 4 || l.Expired != 2 || l.Resold != 1 || l.Returned != nil || l.Undersold != nil {
		t.Errorf("sql-atomic running, before the events: %+v, want paid 5, pending 4, expired 2, resold 1, returned and undersold null", l)
	}
	if l := st.Rows[1].Life; l != nil {
		t.Errorf("lua: life %+v, want null (no pay window)", l)
	}

	b.Watch(scenario.Snapshot{Strategy: "sql-atomic", Done: true, Events: &tally.Events{Returned: 2},
		Audit: &tally.Audit{InitialStock: 10, Stock: 1, Sold: 9, Life: &tally.Life{Paid: 9, Expired: 2, Resold: 1}}})
	if l := state(t, b).Rows[0].Life; l == nil || l.Paid != 9 || l.Returned == nil || *l.Returned != 2 || l.Undersold == nil || *l.Undersold != 0 {
		t.Errorf("sql-atomic done: %+v, want paid 9, returned 2, undersold 0", l)
	}

	b.Finish(report.Document{Strategies: []report.StrategyDoc{
		{Strategy: "sql-atomic", Events: tally.Events{Returned: 3},
			Audit: tally.Audit{ProductID: "p", InitialStock: 10, Stock: 0, Sold: 10, Life: &tally.Life{Paid: 10, Expired: 3, Resold: 3}}},
		{Strategy: "lua", Audit: tally.Audit{ProductID: "q", InitialStock: 10, Sold: 10}},
	}}, nil)
	st = state(t, b)
	if l := st.Rows[0].Life; l == nil || l.Paid != 10 || l.Expired != 3 || *l.Returned != 3 || l.Resold != 3 || *l.Undersold != 0 {
		t.Errorf("sql-atomic at the end: %+v, want the report's: paid 10, expired 3, returned 3, resold 3, undersold 0", l)
	}
	if l := st.Rows[1].Life; l != nil {
		t.Errorf("lua at the end: life %+v, want null", l)
	}
}
