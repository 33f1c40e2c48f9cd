package fault

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A shop that never came back refuses every click sent to it from its
// kill on; a request is counted against its own shop only, even where one
// shop's address is the start of another's.
func TestCrashMeasureShopNotBack(t *testing.T) {
	shops := []string{"http://a:1", "http://a:10/"}
	began := time.Now().Add(-time.Minute)
	c := &Crash{began: began, Kills: []CrashKill{{Shop: 0, At: time.Second, Back: -1}}}
	c.measure(vegeta.Results{
		{URL: "http://a:1/api/v1/orders", Timestamp: began.Add(30 * time.Second)},  // long after: still refused
		{URL: "http://a:10/api/v1/orders", Timestamp: began.Add(30 * time.Second)}, // another shop
		{URL: "http://b:1/api/v1/orders", Timestamp: began.Add(30 * time.Second)},  // no shop of the fleet
	}, shops)
	if k := c.Kills[0]; k.Refused != 1 || k.Cut != 0 {
		t.Errorf("refused %d, cut %d; want 1, 0", k.Refused, k.Cut)
	}
	for url, want := range map[string]int{"http://a:1/x": 0, "http://a:10/x": 1, "http://a:100/x": -1, "http://a:1": -1} {
		if got := shopOf(shops, url); got != want {
			t.Errorf("shopOf(%s) = %d, want %d", url, got, want)
		}
	}
}

// The crash clause says "request" for one, the drift it waited for in
// vain, and its error.
func TestCrashWhyEdges(t *testing.T) {
	drift := 2
	c := &Crash{Planned: 1, Answered: 10, Kills: []CrashKill{{Shop: 0, PID: 7, NewPID: 8, At: time.Second, Back: 2 * time.Second, InFlight: 1, Refused: 1}},
		Drift: &drift, DriftWaited: 15 * time.Second, Err: "restart shop 1: boom", WithoutOrder: -1}
	why := c.Why(Sale{})
	for _, want := range []string{"with 1 request in flight", "1 click sent to it meanwhile", "whether the 10 orders answered have their rows is unknown",
		"Redis's stock still +2 off the database's after waiting 15s", "(restart shop 1: boom)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q\nwant %q", why, want)
		}
	}
	if strings.Contains(why, "kills made") {
		t.Errorf("why = %q: every planned kill was made", why)
	}
}

// The restart clause: nodes back at once without a delay, and its error.
func TestRestartWhyEdges(t *testing.T) {
	r := &Restart{Nodes: []int{0}, Restarted: true, At: time.Second, Back: time.Second, GrantedWhileHeld: 0, Err: "node 1: refused"}
	why := r.Why(Sale{Strategy: strategy.Redlock, LockTTL: time.Second})
	for _, want := range []string{"node 1 of 5 restarted empty at 1s", "served again at once", "still on nodes 2,3,4,5", "saw no other token", "(node 1: refused)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q\nwant %q", why, want)
		}
	}
}

// A kill's nodes stay down for the rest of the attack and a moment more;
// the kill clause counts what came after it from the attack's first
// request, in whatever order the answers came.
func TestNodeKillDuration(t *testing.T) {
	var asked time.Duration
	nodes := killFunc(func(d time.Duration) { asked = d })
	armed, _ := RedlockKill(1).Arm(t.Context(), &Attack{Strategy: strategy.Redlock, Fleet: &fleet.Fleet{Nodes: nodes}, Expected: 20 * time.Millisecond, Stopped: make(chan struct{})})
	if rec, _ := armed.Stop(t.Context(), nil); rec == nil || asked != 10*time.Millisecond+250*time.Millisecond {
		t.Errorf("nodes asked down for %v, want the second half of the attack and 250ms", asked)
	}
	t0 := time.Now()
	k := &Kill{Nodes: []int{0}, Noun: "Redis nodes", Of: 5, At: time.Second}
	results := vegeta.Results{{Timestamp: t0.Add(1500 * time.Millisecond), Code: 503}, {Timestamp: t0, Code: 201}, {Timestamp: t0.Add(500 * time.Millisecond), Code: 201}}
	if why := k.Why(Sale{Results: results}); !strings.Contains(why, "of the 1 requests sent after it, 1 were refused (503)") {
		t.Errorf("why = %q, want the one request sent a second and a half after the first", why)
	}
}

// killFunc is a NodeKiller that reports how long it was asked to keep
// the nodes down.
type killFunc func(time.Duration)

func (f killFunc) Kill(_ context.Context, _ []int, d time.Duration) (func(context.Context) error, error) {
	f(d)
	return nil, nil
}

func (killFunc) Describe() string { return "" }

// The drift's readings are kept in time order, the round's own reading of
// the promoted counter among them however late it arrives; a run without
// rounds times the repair from its start.
func TestDriftReadingsInOrder(t *testing.T) {
	w := &driftWatch{}
	w.add(2*time.Second, 0)
	w.add(time.Second, 3) // the round's reading, added after the watch's
	w.add(3*time.Second, 0)
	at := func() []time.Duration {
		var out []time.Duration
		for _, s := range w.samples {
			out = append(out, s.at)
		}
		return out
	}
	if got := at(); !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}) {
		t.Errorf("samples at %v, want in time order", got)
	}
	d := sumDrift(w.samples, nil)
	if d.Peak != 3 || d.Repaired != 2*time.Second || d.End != 0 || d.Samples != 3 {
		t.Errorf("sumDrift without rounds = %+v, want peak 3, repaired at 2s, end 0", d)
	}
}

// Which rows each fault strikes, and when it is on.
func TestStrikes(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		rows []strategy.Name
	}{
		{RedlockKill(1), []strategy.Name{strategy.Redlock}},
		{EtcdKill(1), []strategy.Name{strategy.Etcd}},
		{&EmptyRestart{Nodes: 1}, []strategy.Name{strategy.Redlock, strategy.Fenced}},
		{&ShopCrash{Kills: 1}, strategy.All()},
		{&SentinelFailover{Enabled: true}, strategy.All()},
	} {
		var got []strategy.Name
		for _, st := range strategy.All() {
			if tc.f.Strikes(st) {
				got = append(got, st)
			}
		}
		if !slices.Equal(got, tc.rows) || !tc.f.On() {
			t.Errorf("%s strikes %v (on %v), want %v", Name(tc.f), got, tc.f.On(), tc.rows)
		}
	}
	if needsRow(&ShopCrash{Kills: 1}, Plan{}, "x") != nil {
		t.Error("a fault in a run of no rows (a library's Settings) needs none")
	}
}

// The grant's cut wants a whole command header before the key: a header
// that is not one is no grant.
func TestSetStart(t *testing.T) {
	for chunk, want := range map[string]int{
		"*3\r\n$3\r\nSET\r\n":     0,
		"xx*3\r\n$5\r\nsetnx\r\n": 2,
		"*x\r\n$3\r\nSET\r\n":     -1,
		"$3\r\nSET\r\n":           -1,
		"*3$3\r\nSET\r\n":         -1,
		"*3\r\n$3\r\nGET\r\n":     -1,
	} {
		if got := setStart([]byte(chunk)); got != want {
			t.Errorf("setStart(%q) = %d, want %d", chunk, got, want)
		}
	}
}

// Sales resume at the first order answered (201 or 409) to a click sent
// after the kill, timed to its answer; clicks sent before the kill, and
// errors after it, are not sales.
func TestFailoverResumedAtTheFirstAnswer(t *testing.T) {
	k := time.Now()
	f := &Failover{Rounds: []FailoverRound{{killed: k, Promoted: time.Second}}}
	f.measureResumed(vegeta.Results{
		{Code: 201, Timestamp: k.Add(-time.Second), Latency: 5 * time.Second}, // sent before the kill
		{Code: 503, Timestamp: k.Add(time.Second), Latency: time.Millisecond},
		{Code: 409, Timestamp: k.Add(3 * time.Second), Latency: time.Second},
		{Code: 201, Timestamp: k.Add(2 * time.Second), Latency: 3 * time.Second},
	})
	if r := f.Rounds[0]; r.Resumed != 4*time.Second || r.AfterCrowd {
		t.Errorf("resumed %v (after the crowd %v), want 4s: the 409 sent at 3s and answered at 4s", r.Resumed, r.AfterCrowd)
	}
}

// A failover of no rounds leaves no record, as a fault that did not fire
// must (nil, not a nil *Failover: the attack appends what is not nil).
func TestFailoverOfNoRounds(t *testing.T) {
	armed, err := (&SentinelFailover{Enabled: true}).Arm(t.Context(), &Attack{Fleet: &fleet.Fleet{}})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := armed.Stop(t.Context(), nil); rec != nil || err != nil {
		t.Errorf("Stop = %#v, %v; want nil, nil", rec, err)
	}
}

// The sales the faults need, all on at once, in the faults' order: the
// crash's, the failover's, the restart's.
func TestDefaultsInOrder(t *testing.T) {
	var flags []string
	for _, d := range Defaults([]Fault{&ShopCrash{Kills: 1}, &SentinelFailover{Enabled: true}, &EmptyRestart{Nodes: 1}}) {
		flags = append(flags, d.Flag)
	}
	want := []string{"strategies", "stock", "lock-ttl", "work", "stall-rate", "stock", "users", "rate", "duration", "strategies", "lock-ttl", "work", "stall-rate", "stock"}
	if !slices.Equal(flags, want) {
		t.Errorf("Defaults set %v, want %v", flags, want)
	}
}

// What a failover reads of the nodes: the tokens on the promoted replica
// other than the holder's while the holder works, a product's stock, a
// key's value ("" when absent).
func TestFailoverReadings(t *testing.T) {
	r := testenv.NewRedis(t, testenv.Embedded)
	c := fleet.NodeClient(r.DirectAddrs()[0], time.Second)
	defer c.Close()
	ctx := t.Context()
	key := order.ProductKey(r.Key("p"))
	if get(ctx, c, key) != "" || stockOn(ctx, c, r.Key("p")) != 0 {
		t.Error("readings of absent keys: want \"\" and 0")
	}
	c.Set(ctx, redisstock.StockKey(r.Key("p")), 7, 0)
	if n := stockOn(ctx, c, r.Key("p")); n != 7 {
		t.Errorf("stockOn = %d, want 7", n)
	}
	c.Set(ctx, key, "holder", 0)
	watching, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() { done <- secondGrants(watching, c, key, "holder", time.Now().Add(time.Hour)) }()
	node := r.Embedded().Node(0)
	for _, tok := range []string{"second", "third", "holder"} {
		c.Set(ctx, key, tok, 0)
		for seen := node.CommandCount(); node.CommandCount() < seen+2; {
			time.Sleep(100 * time.Microsecond) // until the count has read the token
		}
	}
	stop()
	if n := <-done; n != 2 {
		t.Errorf("secondGrants = %d, want 2 (second and third; the holder's own token is not one)", n)
	}

}
