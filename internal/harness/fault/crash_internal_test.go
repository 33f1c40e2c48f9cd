package fault

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A request is in flight to its shop from the targeter to its result.
func TestInFlightCountsPerShop(t *testing.T) {
	shops := []string{"http://127.0.0.1:1", "http://127.0.0.1:10"}
	targets := []vegeta.Target{
		{URL: shops[1] + "/api/v1/orders"}, {URL: shops[0] + "/api/v1/orders"}, {URL: shops[1] + "/api/v1/orders"},
	}
	once := func(tgt *vegeta.Target) error {
		if len(targets) == 0 {
			return vegeta.ErrNoTargets
		}
		*tgt, targets = targets[0], targets[1:]
		return nil
	}
	f := newInFlight(shops)
	next := f.targeter(once)
	var sent []vegeta.Target
	for range 3 {
		var tgt vegeta.Target
		if err := next(&tgt); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, tgt)
	}
	if got0, got1 := f.of(0), f.of(1); got0 != 1 || got1 != 2 {
		t.Fatalf("in flight %d, %d; want 1, 2", got0, got1)
	}
	f.answered(&vegeta.Result{URL: sent[0].URL})
	if got := f.of(1); got != 1 {
		t.Errorf("shop 2 after one answer: %d in flight, want 1", got)
	}
	var tgt vegeta.Target
	if err := next(&tgt); err != vegeta.ErrNoTargets {
		t.Errorf("after the last target: %v, want ErrNoTargets", err)
	}
}

// Cut counts the requests sent before the kill that got no answer, Refused
// those sent while the shop was down; answers and other shops count in
// neither.
func TestCrashMeasure(t *testing.T) {
	shops := []string{"http://a:1", "http://b:1"}
	began := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return began.Add(d) }
	url := func(i int) string { return shops[i] + "/api/v1/orders" }
	ms := time.Millisecond
	c := &Crash{began: began, Kills: []CrashKill{{Shop: 0, At: 100 * ms, Back: 200 * ms}}}
	c.measure(vegeta.Results{
		{URL: url(0), Timestamp: at(90 * ms), Latency: 20 * ms},            // cut
		{URL: url(0), Timestamp: at(95 * ms), Latency: 10 * ms, Code: 201}, // answered before it died
		{URL: url(0), Timestamp: at(50 * ms), Latency: 10 * ms},            // failed before the kill
		{URL: url(0), Timestamp: at(150 * ms), Latency: ms},                // refused
		{URL: url(1), Timestamp: at(150 * ms), Latency: ms},                // another shop
		{URL: url(0), Timestamp: at(250 * ms), Latency: ms, Code: 409},     // back
		{URL: url(0), Timestamp: at(199 * ms), Latency: 5 * ms, Code: 201}, // back early
	}, shops)
	if k := c.Kills[0]; k.Cut != 1 || k.Refused != 1 {
		t.Errorf("cut %d, refused %d; want 1, 1", k.Cut, k.Refused)
	}
}
