package fault

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// runRounds, the loop both failovers share: how many rounds it records,
// how often it arms, and what ends it.
func TestRunRounds(t *testing.T) {
	boom := errors.New("boom")
	ok := func(at time.Duration) step { return step{r: &FailoverRound{At: at}} }
	for _, tc := range []struct {
		name     string
		planned  int
		goOn     int    // next says yes this many times
		steps    []step // what each call of round returns
		rounds   int    // rounds recorded
		calls    int    // round (and arm) calls
		errIsSet string
	}{
		{name: "all planned", planned: 3, goOn: 9, steps: []step{ok(1), ok(2), ok(3), ok(4)}, rounds: 3, calls: 3},
		{name: "next says stop", planned: 3, goOn: 1, steps: []step{ok(1), ok(2)}, rounds: 1, calls: 1},
		{name: "none planned", planned: 0, goOn: 9, steps: []step{ok(1)}, rounds: 0, calls: 0},
		{name: "replicated: tried again", planned: 2, goOn: 9,
			steps: []step{{err: errReplicated}, ok(1), {err: errReplicated}, ok(2)}, rounds: 2, calls: 4},
		{name: "failed after the kill: kept, and the end", planned: 3, goOn: 9,
			steps: []step{ok(1), {r: &FailoverRound{At: 2}, err: boom}, ok(3)}, rounds: 2, calls: 2, errIsSet: "boom"},
		{name: "failed before the kill: the end", planned: 3, goOn: 9,
			steps: []step{{err: boom}, ok(2)}, rounds: 0, calls: 1, errIsSet: "boom"},
		{name: "stopped before the kill: the end, no error", planned: 3, goOn: 9,
			steps: []step{ok(1), {}, ok(3)}, rounds: 1, calls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Failover{Planned: tc.planned}
			calls, arms, asked := 0, 0, 0
			runRounds(rec, func() { arms++ }, func() bool {
				asked++
				return asked <= tc.goOn
			}, func() (*FailoverRound, error) {
				s := tc.steps[calls]
				calls++
				return s.r, s.err
			})
			if len(rec.Rounds) != tc.rounds || calls != tc.calls || arms != tc.calls || rec.Err != tc.errIsSet {
				t.Fatalf("rounds %d, calls %d, arms %d, err %q; want %d, %d, %d, %q",
					len(rec.Rounds), calls, arms, rec.Err, tc.rounds, tc.calls, tc.calls, tc.errIsSet)
			}
			for i, r := range rec.Rounds {
				if i > 0 && r.At <= rec.Rounds[i-1].At {
					t.Errorf("rounds out of order: %v", rec.Rounds)
				}
			}
		})
	}
}

// step is what one call of a round returns.
type step struct {
	r   *FailoverRound
	err error
}

// The readings a round takes on a node: a second grant is a token other
// than the caught holder's, the stock a counter's value, and a node that
// does not answer reads as nothing.
func TestRoundReadings(t *testing.T) {
	testenv.Redis(t, func(t *testing.T, nodes *testenv.RedisNodes) {
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: nodes.DirectAddrs()[0]})
		defer c.Close()
		key, product := nodes.Key("lock"), nodes.Key("p")

		soon := func() time.Time { return time.Now().Add(20 * time.Millisecond) }
		if n := secondGrants(ctx, c, key, "holder", soon()); n != 0 {
			t.Errorf("no key: %d second grants, want 0", n)
		}
		c.Set(ctx, key, "holder", 0)
		if n := secondGrants(ctx, c, key, "holder", soon()); n != 0 {
			t.Errorf("the holder's own token: %d second grants, want 0", n)
		}
		c.Set(ctx, key, "other", 0)
		if n := secondGrants(ctx, c, key, "holder", soon()); n != 1 {
			t.Errorf("another token: %d second grants, want 1", n)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		start := time.Now()
		secondGrants(cancelled, c, key, "holder", time.Now().Add(time.Minute))
		if time.Since(start) > 30*time.Second {
			t.Errorf("secondGrants ran on after its context ended")
		}

		if n := stockOn(ctx, c, product); n != 0 {
			t.Errorf("no counter: stock %d, want 0", n)
		}
		c.Set(ctx, redisstock.StockKey(product), 42, 0)
		if n := stockOn(ctx, c, product); n != 42 {
			t.Errorf("stock %d, want 42", n)
		}
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		defer dead.Close()
		if v := get(ctx, dead, key); v != "" {
			t.Errorf("a node that does not answer reads %q, want nothing", v)
		}
	})
}
