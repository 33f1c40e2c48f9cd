package fault

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/redis/go-redis/v9"
)

// The restart clause states what the record holds: which nodes, when, how
// long they stayed down, and, for redlock, the second holders seen.
func TestRestartWhyStatesTheFigures(t *testing.T) {
	s := Sale{Strategy: strategy.Redlock, LockTTL: time.Second, Work: 150 * time.Millisecond}
	r := &Restart{Nodes: []int{0, 1, 2}, Restarted: true, At: 1230 * time.Millisecond, Back: 2500 * time.Millisecond,
		Delay: time.Second, GrantedWhileHeld: 2}
	for _, tc := range []struct {
		name string
		edit func(*Restart, *Sale)
		want []string
	}{
		{"redlock, two second holders", func(*Restart, *Sale) {},
			[]string{"nodes 1,2,3 of 5 restarted empty at 1.23s", "a 1s lease, 150ms of work", "served again 1.27s later",
				"still on nodes 4,5, 2 other tokens held a majority"}},
		{"none seen", func(r *Restart, _ *Sale) { r.GrantedWhileHeld = 0 }, []string{"saw no other token hold a majority"}},
		{"every node restarted", func(r *Restart, _ *Sale) { r.GrantedWhileHeld = -1 }, []string{"could not be seen"}},
		{"fenced", func(r *Restart, s *Sale) { r.Nodes, s.Strategy = []int{0}, strategy.Fenced },
			[]string{"node 1 of 5 restarted empty", "node 1 held the fenced lock"}},
		{"no holder", func(r *Restart, _ *Sale) { r.Restarted = false }, []string{"no node was restarted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, s := *r, s
			tc.edit(&r, &s)
			why := r.Why(s)
			for _, w := range tc.want {
				if !strings.Contains(why, w) {
					t.Errorf("why = %q, want %q", why, w)
				}
			}
		})
	}
}

// The restart's settings are checked against the nodes there are, the
// rows of the run and the nodes the command line names.
func TestEmptyRestartChecks(t *testing.T) {
	rows := []strategy.Name{strategy.Redlock}
	for _, tc := range []struct {
		name string
		e    EmptyRestart
		p    Plan
		want []string
	}{
		{"three of five", EmptyRestart{Nodes: 3, Delay: time.Second}, Plan{Rows: rows}, nil},
		{"six", EmptyRestart{Nodes: 6}, Plan{Rows: rows}, []string{"redis-restart: 6, want 0..5 of the 5 Redis nodes"}},
		{"a negative delay", EmptyRestart{Nodes: 3, Delay: -time.Second}, Plan{Rows: rows}, []string{"restart-delay: -1s, want 0..1m0s"}},
		{"a delay without a restart", EmptyRestart{Delay: time.Second}, Plan{Rows: rows}, []string{"restart-delay: only with --redis-restart"}},
		{"no row it strikes", EmptyRestart{Nodes: 3}, Plan{Rows: []strategy.Name{strategy.Lua}}, []string{"redis-restart: needs redlock or fenced in --strategies"}},
		{"a fleet's nodes unnamed", EmptyRestart{Nodes: 3}, Plan{Rows: rows, Targets: true}, []string{"redis-restart: --redis is missing"}},
		{"too few nodes named", EmptyRestart{Nodes: 3}, Plan{Rows: rows, Redis: 2}, []string{"redis-restart: 3 nodes to restart, but --redis names 2"}},
		{"off, anywhere", EmptyRestart{}, Plan{Targets: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.e.Check(tc.p)
			if len(got) != len(tc.want) {
				t.Fatalf("Check = %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("Check = %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// The product a restart sells lands the restart inside a critical section
// (restart.go): the holder writes before its first renewal, at a third of
// the lease; and the restart asks for the fleet's proxies.
func TestEmptyRestartSale(t *testing.T) {
	if RestartWork >= RestartLockTTL/3 {
		t.Errorf("RestartWork %v is not under a third of RestartLockTTL %v: the holder's renewal would come before its write", RestartWork, RestartLockTTL)
	}
	want := []Default{{"lock-ttl", "1s"}, {"work", "150ms"}, {"stall-rate", "0"}, {"stock", "10"}}
	if got := (&EmptyRestart{Nodes: 3}).Defaults(); !slices.Equal(got, want) {
		t.Errorf("Defaults = %v, want %v", got, want)
	}
	if _, err := (&EmptyRestart{Nodes: 3}).Ready(&fleet.Fleet{Restarts: &restarter{}, RedisAddrs: []string{"a", "b"}}); !errors.Is(err, ErrNoControl) {
		t.Errorf("Ready with two node addresses for three restarts: %v, want ErrNoControl", err)
	}
	if how, err := (&EmptyRestart{Nodes: 1}).Ready(&fleet.Fleet{Restarts: &restarter{}, RedisAddrs: []string{"a"}}); err != nil || how != "faked" {
		t.Errorf("Ready = %q, %v; want the restarter's description", how, err)
	}
}

// restarter is a fleet.NodeRestarter that empties the lock key on the
// nodes it is asked to restart (what a restart without persistence does
// to it), says which on called, and returns once release closes.
type restarter struct {
	clients []*redis.Client
	key     string
	called  chan restartCall
	release chan struct{}
}

type restartCall struct {
	nodes   []int
	delay   time.Duration
	product string
}

func (r *restarter) Restart(ctx context.Context, nodes []int, delay time.Duration, product string) error {
	for _, i := range nodes {
		r.clients[i].Del(ctx, r.key)
	}
	r.called <- restartCall{nodes, delay, product}
	<-r.release
	return nil
}

func (r *restarter) Describe() string { return "faked" }

// watched is five embedded nodes, a client to each, and a product whose
// lock key a restart watches.
type watched struct {
	r       *testenv.RedisNodes
	clients []*redis.Client
	product string
	key     string
}

func watchNodes(t *testing.T) *watched {
	r := testenv.NewRedis(t, testenv.Embedded)
	w := &watched{r: r, product: r.Key("p"), key: order.ProductKey(r.Key("p"))}
	for _, a := range r.DirectAddrs() {
		c := fleet.NodeClient(a, time.Second)
		t.Cleanup(func() { c.Close() })
		w.clients = append(w.clients, c)
	}
	return w
}

// hold sets the lock key to token on the given nodes.
func (w *watched) hold(t *testing.T, token string, nodes ...int) {
	for _, i := range nodes {
		if err := w.clients[i].Set(t.Context(), w.key, token, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// passes returns once the watch has read node last, the last it reads,
// twice more: one whole pass read the nodes as they are now.
func (w *watched) passes(last int) {
	node := w.r.Embedded().Node(last)
	for seen := node.CommandCount(); node.CommandCount() < seen+2; {
		time.Sleep(100 * time.Microsecond) // the watch's own pace is a millisecond
	}
}

// A restart fires as soon as a new holder takes a majority, on the first
// nodes; it counts a second token that takes the emptied nodes while the
// first still holds the others, and waits for the holder to let go.
func TestEmptyRestartFiresUnderAHolder(t *testing.T) {
	w := watchNodes(t)
	rs := &restarter{clients: w.clients, key: w.key, called: make(chan restartCall, 1), release: make(chan struct{})}
	stopped := make(chan struct{})
	a := &Attack{Strategy: strategy.Redlock, Product: w.product, Stopped: stopped,
		Fleet: &fleet.Fleet{Restarts: rs, RedisAddrs: w.r.DirectAddrs()}}
	w.hold(t, "before", 0, 1, 2, 3, 4) // seen at the first pass: its age is unknown
	armed, err := (&EmptyRestart{Nodes: 3, Delay: 40 * time.Millisecond}).Arm(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	w.passes(4)
	w.hold(t, "A", 0, 1, 2, 3, 4) // a new holder, caught within a pass
	call := <-rs.called
	if !slices.Equal(call.nodes, []int{0, 1, 2}) || call.delay != 40*time.Millisecond || call.product != w.product {
		t.Fatalf("restarted %+v, want nodes 0,1,2 for 40ms, of %s", call, w.product)
	}
	w.hold(t, "B", 0, 1, 2) // a second holder takes the three empty nodes
	w.passes(4)
	for _, c := range w.clients[3:] {
		c.Del(t.Context(), w.key) // A lets go
	}
	close(rs.release)
	close(stopped)
	rec, err := armed.Stop(t.Context(), nil)
	r, _ := rec.(*Restart)
	if err != nil || r == nil || !r.Restarted || r.GrantedWhileHeld != 1 || !slices.Equal(r.Nodes, []int{0, 1, 2}) ||
		r.At <= 0 || r.Back < r.At || r.Delay != 40*time.Millisecond || r.Err != "" {
		t.Fatalf("Stop = %+v, %v; want nodes 0,1,2 restarted, one token granted while A held, back after", rec, err)
	}
}

// A restart whose attack ends, or whose context ends, before any holder
// came restarts nothing, and says so.
func TestEmptyRestartStopsCleanly(t *testing.T) {
	w := watchNodes(t)
	rs := &restarter{called: make(chan restartCall, 1)}
	for _, how := range []string{"stopped", "context"} {
		ctx, cancel := context.WithCancel(t.Context())
		stopped := make(chan struct{})
		a := &Attack{Strategy: strategy.Fenced, Product: w.product, Stopped: stopped, Fleet: &fleet.Fleet{Restarts: rs, RedisAddrs: w.r.DirectAddrs()}}
		armed, err := (&EmptyRestart{Nodes: 1}).Arm(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		w.passes(0) // fenced's one node
		if how == "stopped" {
			close(stopped)
		} else {
			cancel()
		}
		rec, err := armed.Stop(ctx, nil)
		cancel()
		if r, _ := rec.(*Restart); err != nil || r == nil || r.Restarted || len(rs.called) > 0 {
			t.Errorf("%s: Stop = %+v, %v, restarts %d; want nothing restarted", how, rec, err, len(rs.called))
		}
		if why := rec.Why(Sale{}); !strings.Contains(why, "no node was restarted") {
			t.Errorf("%s: why %q", how, why)
		}
	}
}

// The watch counts grants by majority: a token on three of five nodes is
// one, on two is none; with every watched node restarted, it cannot tell
// when the holder let go (-1).
func TestLockWatchMajorities(t *testing.T) {
	w := &lockWatch{quorum: 3}
	if got := w.majorities([]string{"a", "b", "a", "", "a"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("majorities = %v, want [a]", got)
	}
	if got := w.majorities([]string{"a", "a", "b", "b", ""}); got != nil {
		t.Errorf("majorities = %v, want none", got)
	}
	nodes := watchNodes(t)
	fenced := newLockWatch(nodes.r.DirectAddrs(), strategy.Fenced, nodes.key)
	defer fenced.close()
	if len(fenced.clients) != 1 || fenced.quorum != 1 {
		t.Errorf("fenced's watch reads %d nodes, quorum %d; want node 1 alone", len(fenced.clients), fenced.quorum)
	}
	if n := fenced.grantedWhileHeld(t.Context(), "A", []int{0}, nil); n != -1 {
		t.Errorf("granted while held with node 1 restarted = %d, want -1", n)
	}
	nodes.hold(t, "A", 3, 4)
	nodes.hold(t, "B", 0, 1, 2)
	redlock := newLockWatch(nodes.r.DirectAddrs(), strategy.Redlock, nodes.key)
	defer redlock.close()
	stopped := make(chan struct{})
	close(stopped)
	if n := redlock.grantedWhileHeld(t.Context(), "A", []int{0, 1, 2}, stopped); n != 1 {
		t.Errorf("granted while A held = %d, want 1 (B on three of five)", n)
	}
	if n := redlock.grantedWhileHeld(t.Context(), "C", []int{0, 1, 2}, nil); n != 0 {
		t.Errorf("granted while C held, C on no node = %d, want 0 at once", n)
	}
}
