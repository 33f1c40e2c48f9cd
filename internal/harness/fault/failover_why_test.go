package fault

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
)

// rounds are two failovers: the replica held 30 ms and 40 ms, 500 and 800
// bytes behind, promoted within 2.1 s and 2.5 s, sales back within 3 s.
func rounds() *Failover {
	return &Failover{Planned: 3, Rounds: []FailoverRound{
		{At: time.Second, Promoted: 2100 * time.Millisecond, Held: 30 * time.Millisecond, Behind: 500, Caught: true, GrantedTwice: 1, Phantom: -1, Resumed: 3 * time.Second},
		{At: 8 * time.Second, Promoted: 2500 * time.Millisecond, Held: 40 * time.Millisecond, Behind: 800, Caught: false, GrantedTwice: 2, Phantom: -1, Resumed: 2 * time.Second},
	}}
}

// The failover's clause states what the rounds measured: how many, how
// far behind the replica was, the slowest promotion, the second grants
// against the lease, when sales came back; and only what this row's
// strategy lets it see.
func TestFailoverWhy(t *testing.T) {
	lua := Sale{Strategy: strategy.Lua, LockTTL: 12 * time.Second, Work: 3500 * time.Millisecond}
	for _, tc := range []struct {
		name string
		f    func() *Failover
		s    Sale
		want []string
		not  []string
	}{
		{"lua: the lock granted twice", rounds, lua, []string{
			"2 of 3 failovers", "1 of 2 times", "up to 40ms and 800 bytes of writes behind", "within 2.5s",
			"granted the lock again 3 times while the first holder's 3.5s of work ran", "first renewed after 4s", "longer than the 2.5s promotion",
			"within 3.0s of each kill"}, []string{"constant", "counter"}},
		{"naive: a constant cannot be told apart", func() *Failover {
			f := rounds()
			for i := range f.Rounds {
				f.Rounds[i].GrantedTwice = -1
			}
			return f
		}, Sale{Strategy: strategy.Naive, LockTTL: 2 * time.Second}, []string{"naive's lock holds a constant", "the 2s lease was no longer than the 2.5s promotion"}, []string{"granted the lock again"}},
		{"a row whose lock is elsewhere", rounds, Sale{Strategy: strategy.Etcd}, []string{"SIGKILLed 200ms after its replica's link was held", "not on that master (its buyers' dedupe locks are)"}, []string{"granted"}},
		{"a row with no lock", rounds, Sale{Strategy: strategy.SQLAtomic}, []string{"nothing of this row is on that master"}, []string{"granted", "dedupe"}},
		{"a row whose locks are all on its own nodes", rounds, Sale{Strategy: strategy.Redlock}, []string{"nothing of this row is on that master"}, []string{"granted", "dedupe"}},
		{"redis-decr's phantom units, repaired", func() *Failover {
			f := rounds()
			f.Rounds[1].Phantom = 2
			f.Drift = &FailoverDrift{Peak: 2, Repaired: 1500 * time.Millisecond, End: 0, Samples: 90}
			return f
		}, Sale{Strategy: strategy.RedisDecr}, []string{"once the database had sold a unit the replica's stock still offered, 1 of 2 times",
			"promoted after kill 2, it offered 2 units the database had sold", "drift +2 at the peak, repaired within 1.5s of the last kill, 0 at the end"}, nil},
		{"redis-decr's drift not repaired", func() *Failover {
			f := rounds()
			f.Drift = &FailoverDrift{Peak: 1, Repaired: -1, End: 1, Samples: 90}
			return f
		}, Sale{Strategy: strategy.RedisDecr}, []string{"drift +1 at the peak, not repaired: +1 at the end"}, []string{"phantom"}},
		{"redis-decr's drift unread", func() *Failover {
			f := rounds()
			f.Drift = &FailoverDrift{Repaired: -1}
			return f
		}, Sale{Strategy: strategy.RedisDecr}, []string{"the drift could not be read"}, nil},
		{"every promotion after the crowd", func() *Failover {
			f := rounds()
			for i := range f.Rounds {
				f.Rounds[i].Resumed, f.Rounds[i].AfterCrowd = -1, true
			}
			return f
		}, lua, []string{"every promotion came after the last click"}, nil},
		{"the last promotion after the crowd", func() *Failover {
			f := rounds()
			f.Rounds[1].Resumed, f.Rounds[1].AfterCrowd = -1, true
			return f
		}, lua, []string{"within 3.0s of each kill but the last one"}, nil},
		{"sales never back", func() *Failover {
			f := rounds()
			f.Rounds[1].Resumed = -1
			return f
		}, lua, []string{"after some kill no later click was answered 201 or 409 again"}, nil},
		{"on a cluster", func() *Failover {
			f := rounds()
			f.Cluster = true
			return f
		}, lua, []string{"the cluster promoted it within 2.5s"}, []string{"Sentinels"}},
		{"redis-queue's answered orders", func() *Failover {
			f := rounds()
			f.Cluster = true
			f.Queue = &FailoverQueue{Answered: 6, Created: 3, Refused: 2, Unknown: 1}
			return f
		}, Sale{Strategy: strategy.RedisQueue}, []string{"once it had queued an order whose unit the replica's stock still offered, 1 of 2 times",
			"the stream of accepted orders are on that master", "of 6 orders answered 202, 3 were written, 2 refused by the database after the 202", "and 1 known to no shop"}, []string{"not on that master"}},
		{"no round", func() *Failover { return &Failover{Planned: 3, Err: "replica never in sync"} }, lua,
			[]string{"0 of 3 failovers: the attack ended before the first kill (replica never in sync)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := tc.f().Why(tc.s)
			for _, w := range tc.want {
				if !strings.Contains(why, w) {
					t.Errorf("why = %q\nwant %q", why, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(why, n) {
					t.Errorf("why = %q\nsays %q", why, n)
				}
			}
		})
	}
}

// The totals leave out rounds whose second grants were not watched (-1).
func TestFailoverTotals(t *testing.T) {
	f := rounds()
	f.Rounds[0].GrantedTwice = -1
	twice, promoted, resumed := f.Totals()
	if twice != 2 || promoted != 2500*time.Millisecond || resumed != 3*time.Second {
		t.Errorf("totals: %d twice, promoted %v, resumed %v; want 2, 2.5s, 3s", twice, promoted, resumed)
	}
}
