// Package live serves the load generator's live page: one self-contained
// HTML page (no CDN: it works offline) that shows, per strategy, the units
// left, sold and oversold, the duplicate orders, the 503s, orders/s and
// latency percentiles (and a queued strategy's queue length and consumer lag,
// and in a sale with payments the units paid, expired, returned and sold
// again) while the attack runs, pushed to the browser as
// server-sent events; when the run is over, the same figures as
// report.json. cmd/loadgen --live starts it.
package live

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// Row is one strategy's line on the page. Figures the page has not had
// yet are null (UnitsLeft before the first audit).
type Row struct {
	Strategy string `json:"strategy"`
	State    string `json:"state"` // waiting, running, done; at the end "not run" or "stopped" for a run cut short
	// Planned and Sent count the crowd's clicks.
	Planned int `json:"planned_requests"`
	Sent    int `json:"sent_requests"`
	// From the audit: the shop's own count, in its database.
	InitialStock    int  `json:"initial_stock"`
	UnitsLeft       *int `json:"units_left"`
	Sold            int  `json:"sold"`
	Oversold        int  `json:"oversold"`
	DuplicateOrders int  `json:"duplicate_orders"`
	// QueueLength and QueueLag are a queued strategy's backlog (redis-queue):
	// orders accepted and not yet written, and those no consumer has read
	// yet. Null for the other strategies.
	QueueLength *int64 `json:"queue_length"`
	QueueLag    *int64 `json:"queue_lag"`
	// Life is a sale with payments' (a pay window): what became of the
	// orders after the click. Null for a product whose orders are final
	// at once.
	Life *Life `json:"life"`
	// From the answers.
	Created     int `json:"created"`
	Queued      int `json:"queued"`
	SoldOut     int `json:"sold_out"`
	DupRejected int `json:"dup_rejected"`
	Unavailable int `json:"status_503"`
	// Shed counts the clicks turned away for load (503, 429) by code:
	// busy, lock_timeout, rate_limited...
	Shed         map[string]int `json:"shed,omitempty"`
	OrdersPerSec float64        `json:"orders_per_second"`
	P50          float64        `json:"p50_ms"`
	P90          float64        `json:"p90_ms"`
	P99          float64        `json:"p99_ms"`
	Elapsed      float64        `json:"elapsed_seconds"`
	Why          string         `json:"why,omitempty"`
}

// Life is what became of a row's orders after the click, in units: Paid,
// Pending and Expired from the shop's audit (where its orders stand),
// Returned from the fleet's events (units put back on sale, counted by
// the shops that returned them), Resold (sold again after they came
// back) and Undersold (neither sold nor on sale) from the audit.
// Returned is null until the fleet's events were read; Undersold until
// the row is done, as it says something only once the sale has ended.
type Life struct {
	Paid      int    `json:"paid"`
	Pending   int    `json:"pending"`
	Expired   int    `json:"expired"`
	Returned  *int64 `json:"returned"`
	Resold    int    `json:"resold"`
	Undersold *int   `json:"undersold"`
}

// newLife is the Life of an audit and the fleet's events (nil if not
// read yet); nil for a product without a pay window. done: the sale has
// ended, and its undersold units count.
func newLife(a tally.Audit, e *tally.Events, done bool) *Life {
	l := a.Life
	if l == nil {
		return nil
	}
	r := &Life{Paid: l.Paid, Pending: l.Pending, Expired: l.Expired, Resold: l.Resold}
	if e != nil {
		n := e.Returned
		r.Returned = &n
	}
	if done {
		n := l.Undersold
		r.Undersold = &n
	}
	return r
}

// State is everything the page shows, sent whole with every event.
type State struct {
	Title string `json:"title"`
	// Done is set once the run is over and Rows hold the report's figures.
	Done bool   `json:"done"`
	Err  string `json:"error,omitempty"`
	Rows []Row  `json:"rows"`
}

// Board holds the state of one run and tells the pages watching it. Safe
// for concurrent use.
type Board struct {
	mu       sync.Mutex
	state    State
	version  uint64
	changed  chan struct{} // closed and replaced at every change
	lastSent time.Time
}

// NewBoard returns the board of a run of strategies, each waiting, under title.
func NewBoard(title string, strategies []scenario.Strategy) *Board {
	b := &Board{state: State{Title: title, Rows: []Row{}}, changed: make(chan struct{})}
	for _, m := range strategies {
		b.state.Rows = append(b.state.Rows, Row{Strategy: string(m), State: "waiting"})
	}
	return b
}

// Watch takes an attack's snapshot (scenario.Options.Watch).
func (b *Board) Watch(s scenario.Snapshot) {
	r := Row{
		Strategy: string(s.Strategy), State: "running", Planned: s.Planned, Sent: s.Sent,
		Created: s.Created, Queued: s.Queued, SoldOut: s.SoldOut, DupRejected: s.DupRejected, Unavailable: s.Unavailable, Shed: s.Shed,
		OrdersPerSec: s.OrdersPerSec, P50: ms(s.P50), P90: ms(s.P90), P99: ms(s.P99),
		Elapsed: s.Elapsed.Seconds(),
	}
	if s.Done {
		r.State = "done"
	}
	if a := s.Audit; a != nil {
		left := a.Stock
		r.InitialStock, r.UnitsLeft, r.Sold, r.Oversold, r.DuplicateOrders =
			a.InitialStock, &left, a.Sold, a.Oversold, a.DuplicateOrders
		r.QueueLength, r.QueueLag = backlog(a.QueueLength, a.QueuePending)
		r.Life = newLife(*a, s.Events, s.Done)
	}
	b.update(func(st *State) { st.put(r) })
}

// Finish ends the run: the rows become the report's (doc, as report.json
// holds it), and runErr, if not nil, is shown.
func (b *Board) Finish(doc report.Document, runErr error) {
	b.update(func(st *State) {
		for _, m := range doc.Strategies {
			left := m.Audit.Stock
			r := Row{
				Strategy: m.Strategy, State: "done", Planned: m.Planned, Sent: m.Sent,
				InitialStock: m.Audit.InitialStock, UnitsLeft: &left, Sold: m.Audit.Sold,
				Oversold: m.Audit.Oversold, DuplicateOrders: m.Audit.DuplicateOrders,
				Created: m.Answers.Created, Queued: m.Answers.Queued, SoldOut: m.Answers.SoldOut, DupRejected: m.DupRejected,
				Unavailable: m.Answers.Status[503], Shed: m.Answers.Shed(), OrdersPerSec: m.OrdersPerSec,
				P50: m.Latency.P50, P90: m.Latency.P90, P99: m.Latency.P99,
				Elapsed: m.ElapsedSecs, Why: m.Why,
			}
			r.QueueLength, r.QueueLag = backlog(m.Audit.QueueLength, m.Audit.QueuePending)
			r.Life = newLife(m.Audit, &m.Events, true)
			if m.Audit.ProductID == "" { // interrupted before its audit: keep the last one seen
				if prev, ok := st.row(m.Strategy); ok {
					r.InitialStock, r.UnitsLeft, r.Sold, r.Oversold, r.DuplicateOrders, r.Life =
						prev.InitialStock, prev.UnitsLeft, prev.Sold, prev.Oversold, prev.DuplicateOrders, prev.Life
				}
			}
			st.put(r)
		}
		for i := range st.Rows { // the strategies the run did not reach, or left
			switch st.Rows[i].State {
			case "waiting":
				st.Rows[i].State = "not run"
			case "running":
				st.Rows[i].State = "stopped"
			}
		}
		st.Done = true
		if runErr != nil {
			st.Err = runErr.Error()
		}
	})
}

// row returns the row of strategy, if there is one.
func (st *State) row(strategy string) (Row, bool) {
	for _, r := range st.Rows {
		if r.Strategy == strategy {
			return r, true
		}
	}
	return Row{}, false
}

// put replaces the row of r's strategy, or adds it.
func (st *State) put(r Row) {
	for i := range st.Rows {
		if st.Rows[i].Strategy == r.Strategy {
			st.Rows[i] = r
			return
		}
	}
	st.Rows = append(st.Rows, r)
}

func (b *Board) update(change func(*State)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	change(&b.state)
	b.version++
	close(b.changed)
	b.changed = make(chan struct{})
}

// snapshot returns the state as JSON, its version, whether the run is
// done, and a channel closed at the next change.
func (b *Board) snapshot() ([]byte, uint64, bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, err := json.Marshal(b.state)
	if err != nil { // plain data: cannot happen
		panic(err)
	}
	return data, b.version, b.state.Done, b.changed
}

// backlog is a queue's length and lag from the audit's length and
// pending; nil for a product without a queue.
func backlog(length, pending *int64) (*int64, *int64) {
	if length == nil {
		return nil, nil
	}
	lag := *length
	if pending != nil {
		lag = max(0, lag-*pending)
	}
	n := *length
	return &n, &lag
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
