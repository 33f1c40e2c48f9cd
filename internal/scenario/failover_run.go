package scenario

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/redisproc"
	"github.com/flashsale/flashsale/internal/strategy"
)

// failoverMoment is how long the link is held before the kill in the
// attacks whose lock is not on the master (redlock, etcd, sql-atomic,
// redis-decr): no grant to wait for, only the buyers' dedupe locks and
// reservations, which a moment of clicks writes.
const failoverMoment = 200 * time.Millisecond

// failoverRestoreWithin bounds a round's waits on the processes: the
// promotion, the rejoin, the Sentinels' agreement.
const failoverRestoreWithin = 30 * time.Second

// errReplicated says a round's grant reached the replica: it is tried
// again, once the replica follows the link again (AwaitReady).
var errReplicated = errors.New("scenario: the grant reached the replica")

// startFailovers runs Settings.Failovers rounds in this attack, if the
// fleet has a Sentinel set, one after the other, kills at least
// redisproc.KillEvery apart. The returned channel
// yields the record (nil without rounds to run) once the last round has
// put the set back together, or once stopped closes and the round under
// way has.
func (a *attack) startFailovers(ctx context.Context, stopped <-chan struct{}) <-chan *Failover {
	out := make(chan *Failover, 1)
	set := a.fleet.Sentinels
	if a.settings.Failovers == 0 || set == nil {
		out <- nil
		return out
	}
	began := time.Now()
	go func() {
		rec := &Failover{Planned: a.settings.Failovers}
		for len(rec.Rounds) < rec.Planned {
			if n := len(rec.Rounds); n > 0 { // Sentinel's own pace (redisproc.KillEvery)
				next := began.Add(rec.Rounds[n-1].At + redisproc.KillEvery)
				if !poll(ctx, stopped, func() bool { return !time.Now().Before(next) }) {
					break
				}
			}
			r, err := a.failoverRound(ctx, set, began, stopped)
			if errors.Is(err, errReplicated) {
				continue // a new round points the replica back at the link
			}
			if r != nil {
				rec.Rounds = append(rec.Rounds, *r)
			}
			if err != nil {
				rec.Err = err.Error()
			}
			if r == nil || err != nil {
				break
			}
		}
		out <- rec
	}()
	return out
}

// failoverRound holds the link, kills the master at the right moment,
// times the promotion, counts second grants and rejoins the old master.
// It returns nil, nil if stopped closed before the kill; after the kill it
// finishes on a context of its own, even after Ctrl-C, so that the set is
// whole for the next attack.
func (a *attack) failoverRound(ctx context.Context, set *redisproc.Set, began time.Time, stopped <-chan struct{}) (*FailoverRound, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failoverRestoreWithin)
	defer cancel()
	if err := set.AwaitReady(rctx); err != nil {
		return nil, err
	}
	master, replica, link := set.Master(), set.Replica(), set.Link()
	mc, rc := nodeClient(master.Addr, 100*time.Millisecond), nodeClient(replica.Addr, 100*time.Millisecond)
	defer mc.Close()
	defer rc.Close()
	key := lockKey(a.productID)
	r := &FailoverRound{GrantedTwice: -1}
	var holder string
	var granted, heldAt time.Time
	if onMaster(a.mode) {
		// 1. The lock free on the master, then the link held: what is
		// granted from now on stays on the master.
		if !poll(ctx, stopped, func() bool { return get(ctx, mc, key) == "" }) {
			return nil, nil
		}
		link.Hold()
		heldAt = time.Now()
		// 2. A grant on the master: its holder now reads the stock.
		if !poll(ctx, stopped, func() bool { holder = get(ctx, mc, key); return holder != "" }) {
			link.Release()
			return nil, nil
		}
		granted = time.Now()
		// 3. Unless the grant reached the replica before the hold did,
		// or a Sentinel had pointed the replica past the link, the
		// replica holds no lock: a promoted replica grants it again.
		if r.Caught = get(ctx, rc, key) == ""; !r.Caught {
			link.Release()
			return nil, errReplicated
		}
	} else {
		link.Hold()
		heldAt = time.Now()
		if !poll(ctx, stopped, func() bool { return time.Since(heldAt) >= failoverMoment }) {
			link.Release()
			return nil, nil
		}
	}
	if m, rep, err := set.Offsets(rctx); err == nil {
		r.Behind = m - rep
	}
	// 4. The kill; the link dies with the master, and what it held is
	// dropped, never delivered.
	set.KillMaster()
	r.killed = time.Now()
	link.Stop()
	r.At, r.Held = r.killed.Sub(began), r.killed.Sub(heldAt)
	twice := make(chan int, 1)
	if r.Caught && a.mode.Strategy() != strategy.Naive { // naive's value is a constant: no holder tells from another
		go func() { twice <- secondGrants(rctx, rc, key, holder, granted.Add(a.settings.Work)) }()
	}
	// 5. Sentinel promotes the replica; the old master rejoins, empty.
	if err := set.AwaitMaster(rctx, replica.Addr); err != nil {
		return r, err
	}
	r.Promoted = time.Since(r.killed)
	err := set.Rejoin(rctx)
	if r.Caught && a.mode.Strategy() != strategy.Naive {
		r.GrantedTwice = <-twice
	}
	return r, err
}

// secondGrants counts the tokens other than holder's seen holding key on
// c, the promoted replica, until until: the caught holder's work has not
// ended by then, so each is a second holder inside the critical section.
func secondGrants(ctx context.Context, c *redis.Client, key, holder string, until time.Time) int {
	seen := map[string]bool{}
	for time.Now().Before(until) && ctx.Err() == nil {
		if t := get(ctx, c, key); t != "" && t != holder {
			seen[t] = true
		}
		time.Sleep(watchEveryPass) // polling the server's state
	}
	return len(seen)
}

// get reads key on c: its value, "" when absent or unanswered.
func get(ctx context.Context, c *redis.Client, key string) string {
	v, _ := c.Get(ctx, key).Result()
	return v
}

// poll asks cond every watchEveryPass until it holds; it reports false if
// stopped closes or ctx ends first.
func poll(ctx context.Context, stopped <-chan struct{}, cond func() bool) bool {
	for !cond() {
		t := time.NewTimer(watchEveryPass)
		select {
		case <-t.C:
		case <-stopped:
			t.Stop()
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	return true
}
