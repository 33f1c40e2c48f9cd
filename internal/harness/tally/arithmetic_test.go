package tally

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// body is the shop's error answer with code.
func body(code string) []byte { return []byte(`{"error":{"code":"` + code + `","message":"x"}}`) }

// Each answer is one kind, by its status and the shop's error code: an
// order, a queued order, sold out, a repeated click, or an error.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		r    vegeta.Result
		want string
	}{
		{vegeta.Result{Code: 201, Body: []byte(`{"id":"1"}`)}, KindCreated},
		{vegeta.Result{Code: 202, Body: []byte(`{"id":"1","status":"queued"}`)}, KindQueued},
		{vegeta.Result{Code: 409, Body: body("sold_out")}, KindSoldOut},
		{vegeta.Result{Code: 409, Body: body("duplicate_request")}, KindDuplicate},
		{vegeta.Result{Code: 409, Body: body("duplicate_order")}, KindDuplicate},
		{vegeta.Result{Code: 409, Body: body("already_exists")}, KindError},
		{vegeta.Result{Code: 409, Body: []byte("not json")}, KindError},
		{vegeta.Result{Code: 503, Body: body("sold_out")}, KindError}, // a code means something under its status alone
		{vegeta.Result{Code: 0, Error: "dial tcp: connection refused"}, KindError},
	} {
		if got := Classify(&tc.r); got != tc.want {
			t.Errorf("Classify(%d %s) = %s, want %s", tc.r.Code, tc.r.Body, got, tc.want)
		}
	}
}

// An error answer is counted under its status and what tells it apart:
// the shop's code, the transport error's tail, or the status's text.
func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		r    vegeta.Result
		want string
	}{
		{vegeta.Result{Code: 503, Body: body("lock_timeout")}, "lock_timeout"},
		{vegeta.Result{Code: 500, Body: []byte("oops")}, "internal_server_error"},
		{vegeta.Result{Code: 429}, "too_many_requests"},
		{vegeta.Result{Code: 201}, ""},
		{vegeta.Result{Code: 0, Error: `Post "http://x/api/v1/orders": read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer`}, "connection reset by peer"},
		{vegeta.Result{Code: 0, Error: "EOF"}, "EOF"},
		{vegeta.Result{Code: 0}, "no answer"},
	} {
		if got := errorCode(&tc.r); got != tc.want {
			t.Errorf("errorCode(%d %q %q) = %q, want %q", tc.r.Code, tc.r.Body, tc.r.Error, got, tc.want)
		}
	}
}

// The tally's sums: orders the buyers were told of, clicks turned away
// for load by their code, answers by class.
func TestTallySums(t *testing.T) {
	var tl Answers
	if tl.Shed() != nil || tl.Accepted() != 0 || tl.ErrorsByStatus() != "-" {
		t.Errorf("an empty tally: shed %v, accepted %d, errors %q; want none", tl.Shed(), tl.Accepted(), tl.ErrorsByStatus())
	}
	for _, r := range []vegeta.Result{
		{Code: 201}, {Code: 202}, {Code: 202},
		{Code: 503, Body: body("busy")}, {Code: 503, Body: body("busy")}, {Code: 503, Body: body("lock_timeout")},
		{Code: 429, Body: body("rate_limited")},
		{Code: 500, Body: body("busy")}, // not shed: a 500 is a failure, whatever it says
		{Code: 0, Error: "EOF"},
	} {
		tl.Add(&r)
	}
	if tl.Accepted() != 3 || tl.Created != 1 || tl.Queued != 2 {
		t.Errorf("accepted %d (%d created, %d queued), want 3 (1, 2)", tl.Accepted(), tl.Created, tl.Queued)
	}
	if shed := tl.Shed(); !reflect.DeepEqual(shed, map[string]int{"busy": 2, "lock_timeout": 1, "rate_limited": 1}) {
		t.Errorf("Shed() = %v, want busy 2, lock_timeout 1, rate_limited 1", shed)
	}
	if got := tl.ErrorsByStatus(); got != "0×1 429×1 500×1 503×3" {
		t.Errorf("ErrorsByStatus() = %q", got)
	}
	if c2, c4, c5, other := tl.Class(); c2 != 3 || c4 != 1 || c5 != 4 || other != 1 || c2+c4+c5+other != tl.Requests {
		t.Errorf("Class() = %d %d %d %d of %d answers", c2, c4, c5, other, tl.Requests)
	}
}

// Events.Add sums every count: a field it forgot would read 1 here.
func TestEventsAddSumsEveryField(t *testing.T) {
	var one Events
	v := reflect.ValueOf(&one).Elem()
	for i := range v.NumField() {
		v.Field(i).SetInt(1)
	}
	sum := one
	sum.Add(one)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		if got := s.Field(i).Int(); got != 2 {
			t.Errorf("%s after adding 1 to 1: %d", s.Type().Field(i).Name, got)
		}
	}
}

// A product is drained when its queue holds nothing, written or pending,
// and Redis answered; a product without a queue always is.
func TestAuditDrained(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		a    Audit
		want bool
	}{
		{Audit{}, true},
		{Audit{QueueLength: n(0), QueuePending: n(0)}, true},
		{Audit{QueueLength: n(3), QueuePending: n(0)}, false},
		{Audit{QueueLength: n(0), QueuePending: n(1)}, false},
		{Audit{QueueLength: n(0), RedisError: "dial tcp: refused"}, false},
	} {
		if got := drained(tc.a); got != tc.want {
			t.Errorf("%+v drained: %v, want %v", tc.a, got, tc.want)
		}
	}
}

// The drain is timed from the last click sent, not from the call.
func TestWaitDrainTimesFromTheLastClick(t *testing.T) {
	last := time.Now().Add(-2 * time.Second)
	results := vegeta.Results{{Timestamp: last.Add(-time.Second)}, {Timestamp: last}}
	d, err := WaitDrain(t.Context(), &backlog{}, "p", results, nil)
	if err != nil || d.Took < 2*time.Second || d.Took > time.Minute {
		t.Errorf("WaitDrain = %+v, %v; want about 2s from the last click", d, err)
	}
	if got := lastClick(nil); time.Since(got) > time.Minute {
		t.Errorf("lastClick of no results = %v, want now", got)
	}
}

// meter reads a CPU that grows by step at each read, or fails.
type meter struct {
	now, step time.Duration
	fail      bool
}

func (m *meter) CPU(context.Context) (time.Duration, error) {
	if m.fail {
		return 0, errors.New("no /metrics")
	}
	m.now += m.step
	return m.now, nil
}

func (m *meter) Describe() string { return "test" }

// Spent is the CPU read after less the CPU read before; unknown (-1) when
// a read fails or there is no meter.
func TestSpent(t *testing.T) {
	if got := Spent(t.Context(), &meter{step: 30 * time.Millisecond})(); got != 30*time.Millisecond {
		t.Errorf("Spent = %v, want 30ms", got)
	}
	if got := Spent(t.Context(), &meter{fail: true})(); got != -1 {
		t.Errorf("Spent with a failing meter = %v, want -1", got)
	}
	if got := Spent(t.Context(), nil)(); got != -1 {
		t.Errorf("Spent without a meter = %v, want -1", got)
	}
}

// An order whose lookup keeps failing counts as lost; one asked about
// after the context ended does not, and the context's end is returned.
func TestUnwrittenLookupsThatFail(t *testing.T) {
	results := vegeta.Results{{Code: 201, Body: []byte(`{"id":"a"}`)}}
	down := &orders{fail: map[string]int{"a": confirmTries}}
	if n, err := Unwritten(t.Context(), []OrderLookup{down}, results); err != nil || n != 1 {
		t.Errorf("Unwritten with a lookup that always fails = %d, %v; want 1 lost", n, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if n, err := Unwritten(ctx, []OrderLookup{&orders{fail: map[string]int{"a": 1}}}, results); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("Unwritten after the context ended = %d, %v; want 0, context.Canceled", n, err)
	}
	if n, err := Unwritten(t.Context(), []OrderLookup{down}, nil); err != nil || n != 0 {
		t.Errorf("Unwritten with no orders = %d, %v", n, err)
	}
}

// A queue that does not drain within the wait is recorded, not an error:
// the audit after it shows what was written by then. So is a shop that
// stops answering.
func TestWaitDrainGivesUp(t *testing.T) {
	defer func(d time.Duration) { drainWait = d }(drainWait)
	drainWait = 30 * time.Millisecond
	d, err := WaitDrain(t.Context(), &backlog{n: 1 << 30}, "p", nil, nil)
	if err != nil || d == nil || !strings.Contains(d.Err, "not drained within 30ms") {
		t.Errorf("WaitDrain of a queue that stays full = %+v, %v; want it recorded as not drained", d, err)
	}
	d, err = WaitDrain(t.Context(), unreachable{}, "p", nil, nil)
	if err != nil || d == nil || d.Err != "shop down" {
		t.Errorf("WaitDrain of a shop that does not answer = %+v, %v; want its error recorded", d, err)
	}
}

// unreachable is an Auditor that never answers.
type unreachable struct{}

func (unreachable) Audit(context.Context, string) (Audit, error) {
	return Audit{}, errors.New("shop down")
}

// stuck is an Auditor whose queue keeps queued and pending orders, and
// whose Redis says why it did not answer.
type stuck struct{ queued, pending int64 }

func (s stuck) Audit(context.Context, string) (Audit, error) {
	return Audit{QueueLength: &s.queued, QueuePending: &s.pending, RedisError: "LOADING"}, nil
}

// A queue that did not drain says what it still held.
func TestWaitDrainSaysWhatIsLeft(t *testing.T) {
	defer func(d time.Duration) { drainWait = d }(drainWait)
	drainWait = 10 * time.Millisecond
	d, err := WaitDrain(t.Context(), stuck{queued: 3, pending: 1}, "p", nil, nil)
	if err != nil || d == nil || !strings.HasSuffix(d.Err, ": 3 queued, 1 pending (LOADING)") {
		t.Errorf("WaitDrain = %+v, %v; want the 3 queued and 1 pending orders, and Redis's error", d, err)
	}
}

// The tally and the events keep their names in report.json, which
// scripts and the report's readers read.
func TestJSONNames(t *testing.T) {
	for _, tc := range []struct {
		v     any
		names []string
	}{
		{Answers{}, []string{"requests", "created", "queued", "sold_out", "duplicate_requests", "duplicate_orders_rejected", "errors", "status"}},
		{Events{}, []string{"late_commits", "fenced_out", "locks_lost", "given_back", "reclaimed", "queue_written", "queue_refused", "batches", "batched_buyers", "version_moved", "holds", "held_us"}},
	} {
		v, names := tc.v, tc.names
		b, _ := json.Marshal(v)
		var got map[string]any
		json.Unmarshal(b, &got)
		for _, n := range names {
			if _, ok := got[n]; !ok {
				t.Errorf("%T in JSON %s has no %q", v, b, n)
			}
		}
		if len(got) != len(names) {
			t.Errorf("%T in JSON has %d fields, want %d: %s", v, len(got), len(names), b)
		}
	}
}

// counting is an OrderLookup that counts its lookups, every order
// existing; its lookups wait, up to a second, until the other shop's
// lookups have begun, so a run that used one shop alone shows as such.
type counting struct {
	n     atomic.Int64
	begun chan struct{}
	other *counting
	once  sync.Once
}

func (c *counting) OrderStatus(context.Context, string) (string, error) {
	c.n.Add(1)
	c.once.Do(func() { close(c.begun) })
	select {
	case <-c.other.begun:
	case <-time.After(time.Second):
	}
	return "created", nil
}

// The lookups are spread over the shops, each order asked once.
func TestUnwrittenSpreadsTheLookups(t *testing.T) {
	var results vegeta.Results
	for i := range 40 {
		results = append(results, vegeta.Result{Code: 201, Body: fmt.Appendf(nil, `{"id":"o%d"}`, i)})
	}
	a, b := &counting{begun: make(chan struct{})}, &counting{begun: make(chan struct{})}
	a.other, b.other = b, a
	if n, err := Unwritten(t.Context(), []OrderLookup{a, b}, results); err != nil || n != 0 {
		t.Fatalf("Unwritten = %d, %v; want 0", n, err)
	}
	if a.n.Load() == 0 || b.n.Load() == 0 || a.n.Load()+b.n.Load() != 40 {
		t.Errorf("lookups %d and %d, want 40 spread over both shops", a.n.Load(), b.n.Load())
	}
}
