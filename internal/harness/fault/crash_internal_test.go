package fault

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// InFlight counts the requests sent before the kill and answered after
// it, Cut those of them that got no answer, Refused those sent while the
// shop was down; other shops count in none.
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
	if k := c.Kills[0]; k.InFlight != 2 || k.Cut != 1 || k.Refused != 1 {
		t.Errorf("in flight %d, cut %d, refused %d; want 2, 1, 1", k.InFlight, k.Cut, k.Refused)
	}
}
