package fault

import (
	"math/rand/v2"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Whatever the results, each kill's counts keep the bounds the scenario's
// crash test asserts: Cut never exceeds InFlight, and Cut and Refused are
// disjoint among the shop's requests without an answer (so their sum never
// exceeds the attack's Status[0]). Timestamps land on the kill and on Back
// exactly, latencies are 0 or long, codes 0 or not, and results of other
// shops and of no shop (a targeter error leaves URL empty) are mixed in.
func TestCrashMeasureBounds(t *testing.T) {
	shops := []string{"http://a:1", "http://a:10", "http://b:1"}
	began := time.Now() // monotonic, as Arm's and Vegeta's are
	ms := time.Millisecond
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(ds ...time.Duration) time.Duration { return ds[rng.IntN(len(ds))] }
	for round := range 2000 {
		var kills []CrashKill
		for i := range 1 + rng.IntN(3) {
			at := time.Duration(100+rng.IntN(400)) * ms
			back := at + time.Duration(rng.IntN(300))*ms
			if rng.IntN(5) == 0 {
				back = -1
			}
			kills = append(kills, CrashKill{Shop: i % len(shops), At: at, Back: back})
		}
		var rs vegeta.Results
		for range 200 {
			url := ""
			if s := rng.IntN(len(shops) + 1); s < len(shops) {
				url = shops[s] + "/api/v1/orders"
			}
			k := kills[rng.IntN(len(kills))]
			ts := pick(k.At, k.At-ms, k.At+ms, k.Back, k.Back-ms, time.Duration(rng.IntN(900))*ms)
			code := uint16(pick(0, 0, 201, 409, 503))
			rs = append(rs, vegeta.Result{URL: url, Timestamp: began.Add(ts), Latency: pick(0, ms, k.At-ts, time.Hour), Code: code})
		}
		c := &Crash{began: began, Kills: kills}
		c.measure(rs, shops)
		for i, k := range c.Kills {
			noAnswer := 0
			for _, r := range rs {
				if r.Code == 0 && shopOf(shops, r.URL) == k.Shop {
					noAnswer++
				}
			}
			if k.Cut > k.InFlight || k.Cut+k.Refused > noAnswer || k.InFlight < 0 {
				t.Fatalf("round %d kill %d: %+v with %d requests to its shop without an answer", round, i, k, noAnswer)
			}
		}
	}
}

// TestShopCrashKillsAndRestarts's click is stamped after Arm started the
// kills' clock; a click stamped before Arm is in flight at the first kill
// however late the test goroutine runs. (Documents the ordering the test
// relies on: a click stamped after the kill is refused, not in flight.)
func TestCrashMeasureClickAfterKillIsNotInFlight(t *testing.T) {
	shops := []string{"http://a:1"}
	began := time.Now()
	c := &Crash{began: began, Kills: []CrashKill{{Shop: 0, At: 300 * time.Millisecond, Back: 400 * time.Millisecond}}}
	c.measure(vegeta.Results{{URL: shops[0] + "/api/v1/orders", Timestamp: began.Add(350 * time.Millisecond), Latency: time.Hour}}, shops)
	if k := c.Kills[0]; k.InFlight != 0 || k.Refused != 1 {
		t.Errorf("%+v: a click stamped after the kill is refused, not in flight", k)
	}
}
