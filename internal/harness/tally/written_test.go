package tally

import (
	"context"
	"errors"
	"sync"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// orders is an OrderLookup over a fixed table of statuses; fail makes the
// first lookups of an id fail that many times.
type orders struct {
	mu     sync.Mutex
	status map[string]string
	fail   map[string]int
}

func (o *orders) OrderStatus(_ context.Context, id string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail[id] > 0 {
		o.fail[id]--
		return "", errors.New("connection refused")
	}
	if st, ok := o.status[id]; ok {
		return st, nil
	}
	return "unknown", nil
}

// Every 201 or 202 answer whose order is not "created" counts as
// unwritten: unknown, still queued, refused; a lookup that fails and then
// answers counts by its answer.
func TestUnwrittenCountsWhatIsNotCreated(t *testing.T) {
	answer := func(code uint16, id string) vegeta.Result {
		return vegeta.Result{Code: code, Body: []byte(`{"id":"` + id + `"}`)}
	}
	results := vegeta.Results{
		answer(201, "a"), answer(202, "b"), answer(201, "c"), answer(202, "d"), answer(201, "e"),
		answer(409, "not-an-order"), {Code: 0},
	}
	shop := &orders{
		status: map[string]string{"a": "created", "b": "created", "c": "created", "d": "refused", "not-an-order": "created"},
		fail:   map[string]int{"c": 2},
	}
	// e is unknown, d refused: 2 of the 5 answered orders.
	got, err := Unwritten(t.Context(), []OrderLookup{shop, shop}, results)
	if err != nil || got != 2 {
		t.Fatalf("Unwritten = %d, %v; want 2, nil", got, err)
	}
	if ids := AcceptedIDs(results); len(ids) != 5 {
		t.Errorf("AcceptedIDs = %v, want the 5 orders answered 201 or 202", ids)
	}
}

// backlog is an Auditor whose product's queue empties after n reads.
type backlog struct {
	mu sync.Mutex
	n  int
}

func (b *backlog) Audit(context.Context, string) (Audit, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	left := int64(b.n)
	if b.n > 0 {
		b.n--
	}
	return Audit{QueueLength: &left}, nil
}

// WaitDrain polls until the backlog is gone, calling tick at each poll
// that found one, and ends with ctx.
func TestWaitDrain(t *testing.T) {
	ticks := 0
	d, err := WaitDrain(t.Context(), &backlog{n: 3}, "p", nil, func() { ticks++ })
	if err != nil || d == nil || d.Err != "" {
		t.Fatalf("WaitDrain = %+v, %v; want drained", d, err)
	}
	if ticks != 3 {
		t.Errorf("%d ticks, want 3 (one per poll that found a backlog)", ticks)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := WaitDrain(ctx, &backlog{n: 1 << 30}, "p", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitDrain after ctx ended: %v, want context.Canceled", err)
	}
}
