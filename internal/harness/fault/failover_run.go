package fault

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// failoverMoment is how long the link is held before the kill in the
// attacks whose lock and stock are not on the master (redlock, etcd,
// sql-atomic), and in redis-decr's once its replica offers no unit: no
// grant or sale to wait for, only etcd's buyers' dedupe locks and
// redis-decr's reservations, which a moment of clicks writes.
const failoverMoment = 200 * time.Millisecond

// failoverRestoreWithin bounds a round's waits on the processes: the
// promotion, the rejoin, the Sentinels' agreement.
const failoverRestoreWithin = 30 * time.Second

// restoreWithin, when set (nanoseconds), replaces failoverRestoreWithin:
// the package's tests of rounds that fail set it shorter, since those
// rounds wait it out.
var restoreWithin atomic.Int64

// restoreBound is the bound on a round's waits: failoverRestoreWithin
// unless a test set restoreWithin.
func restoreBound() time.Duration {
	if d := time.Duration(restoreWithin.Load()); d > 0 {
		return d
	}
	return failoverRestoreWithin
}

// errReplicated says a round's grant reached the replica: it is tried
// again, once the replica follows the link again (AwaitReady).
var errReplicated = errors.New("fault: the grant reached the replica")

// Arm starts a's rounds, if the fleet has a Sentinel set, one after the
// other, kills at least redisproc.KillEvery apart, and returns once the
// first round's hold is in place, or set to come at the next grant
// (HoldAt): before the attack's first click (at once if there is no round
// to run, or the first could not begin). A round that waits for nothing
// but a moment (failoverMoment) needs no buyer: the rows whose lock is not
// on the master get all their rounds even if a slow promotion pushed the
// last one past the crowd.
func (sf *SentinelFailover) Arm(ctx context.Context, a *Attack) (Armed, error) {
	fo := &failingOver{attack: a, out: make(chan *Failover, 1)}
	if sf.Rounds == 0 {
		fo.out <- nil
		return fo, nil
	}
	held := make(chan struct{})
	set := a.Fleet.Sentinels
	arm := sync.OnceFunc(func() { close(held) })
	began := time.Now()
	stopped := a.Stopped
	between := stopped // the rows that wait for a grant need the crowd
	if !onMaster(a.Strategy) {
		between = nil
	}
	go func() {
		defer arm()
		rec := &Failover{Planned: sf.Rounds}
		var drift *driftWatch
		if a.Strategy == strategy.RedisDecr {
			drift = watchDrift(ctx, a, sentinelMaster(set), began)
		}
		runRounds(rec, arm, func() bool {
			n := len(rec.Rounds)
			if n == 0 {
				return true
			}
			// Sentinel's own pace (redisproc.KillEvery).
			next := began.Add(rec.Rounds[n-1].At + redisproc.KillEvery)
			return poll(ctx, between, func() bool { return !time.Now().Before(next) })
		}, func() (*FailoverRound, error) {
			return fo.round(ctx, set, began, arm, drift)
		})
		if drift != nil {
			rec.Drift = drift.settle(ctx, stopped, rec.Rounds)
		}
		fo.out <- rec
	}()
	<-held
	return fo, nil
}

// runRounds runs round until rec has its planned rounds, asking next
// before each whether to go on (false ends the rounds), and records each
// round and the error that ended them. After a round, arm is called: a
// first round that could not set its hold has the attack wait no longer.
// A round whose replica had caught up (errReplicated) is run again: a new
// round points the replica back at the link. It runs on the caller's
// goroutine.
func runRounds(rec *Failover, arm func(), next func() bool, round func() (*FailoverRound, error)) {
	for len(rec.Rounds) < rec.Planned && next() {
		r, err := round()
		arm()
		if errors.Is(err, errReplicated) {
			continue
		}
		if r != nil {
			rec.Rounds = append(rec.Rounds, *r)
		}
		if err != nil {
			rec.Err = err.Error()
		}
		if r == nil || err != nil {
			return
		}
	}
}

// Stop waits until the last round has put the set back together, or, once
// a.Stopped closed, the round under way has; for redis-decr, until the
// drift has been read back to 0 too (driftWatch.settle). It records the
// rounds with when sales resumed after each. A round that failed is in
// the record, not an error.
func (fo *failingOver) Stop(_ context.Context, results vegeta.Results) (Record, error) {
	rec := <-fo.out
	if rec == nil {
		return nil, nil
	}
	rec.measureResumed(results)
	fo.rec, fo.results = rec, results
	return rec, nil
}

// failoverRound holds the link, kills the master at the right moment,
// times the promotion, counts second grants and rejoins the old master;
// held is called once the hold is in place or set. It returns nil, nil if
// stopped closed before the kill of a round that waits for a grant or a
// sale; after the kill it finishes on a context of its
// own, even after Ctrl-C, so that the set is whole for the next attack.
// drift, for redis-decr, is sent the promoted counter's first reading.
func (fo *failingOver) round(ctx context.Context, set *redisproc.Set, began time.Time, held func(), drift *driftWatch) (*FailoverRound, error) {
	a, stopped := fo.attack, fo.attack.Stopped
	rctx, cancel := restoreContext(ctx)
	defer cancel()
	if err := set.AwaitReady(rctx); err != nil {
		return nil, err
	}
	master, replica, link := set.Master(), set.Replica(), set.Link()
	mc, rc := fleet.NodeClient(master.Addr, 100*time.Millisecond), fleet.NodeClient(replica.Addr, 100*time.Millisecond)
	defer mc.Close()
	defer rc.Close()
	key := order.ProductKey(a.Product)
	r := &FailoverRound{GrantedTwice: -1, Phantom: -1}
	// 0. The replica has what the master had when the round began: what
	// it misses at the kill is what came after the hold.
	if err := caughtUp(rctx, set); err != nil {
		return nil, err
	}
	var holder string
	var granted, heldAt time.Time
	var offered int // redis-decr: the replica's stock, frozen by the hold
	switch {
	case onMaster(a.Strategy):
		// 1. The link held at the master's next grant of the lock
		// (grantCut): the replica gets everything before it, the last
		// holder's release too, and not the grant.
		link.HoldAt(grantCut(key))
		held()
		if !poll(ctx, stopped, link.Held) {
			link.Release()
			return nil, nil
		}
		heldAt = time.Now()
		// 2. The grant complete (naive's PEXPIRE follows its SETNX): its
		// holder now reads the stock.
		if !poll(ctx, stopped, func() bool { return mc.PTTL(ctx, key).Val() > 0 }) {
			link.Release()
			return nil, nil
		}
		granted, holder = time.Now(), get(ctx, mc, key)
		// 3. Unless a Sentinel had pointed the replica past the link, the
		// replica never heard of that grant: a promoted replica grants the
		// lock again.
		if r.Caught = set.FollowsLink(ctx) && (a.Strategy == strategy.Naive || get(ctx, rc, key) != holder); !r.Caught {
			link.Release()
			return nil, errReplicated
		}
	default:
		// 1. The link held: the replica's stock (redis-decr's) stays what
		// it is now.
		link.Hold()
		heldAt = time.Now()
		held()
		// 2. Redis-decr's database sells a unit the replica's stock still
		// offers (a buyer reserved it on the master after the hold, and
		// its order was written): the promoted counter will offer it
		// again. The other rows, or nothing offered: a moment, which
		// needs no buyer.
		var wait <-chan struct{}
		until := func() bool { return time.Since(heldAt) >= failoverMoment }
		if a.Strategy == strategy.RedisDecr {
			if offered = stockOn(ctx, rc, a.Product); offered > 0 {
				wait, until = stopped, func() bool {
					au, err := a.Shop.Audit(ctx, a.Product)
					return err == nil && au.Stock < offered
				}
			}
		}
		if !pollEvery(ctx, wait, 20*time.Millisecond, until) {
			link.Release()
			return nil, nil
		}
		r.Caught = offered > 0
	}
	if m, rep, err := set.Offsets(rctx); err == nil {
		r.Behind = m - rep
	}
	// 4. The kill; the link dies with the master, and what it held is
	// dropped, never delivered.
	set.KillMaster()
	r.killed = time.Now()
	link.Stop()
	kctx, kcancel := restoreContext(ctx) // rctx may be spent by a long hold
	defer kcancel()
	r.At, r.Held = r.killed.Sub(began), r.killed.Sub(heldAt)
	if a.Strategy == strategy.RedisDecr {
		offered = stockOn(kctx, rc, a.Product) // what the promoted counter starts from
	}
	twice := make(chan int, 1)
	if r.Caught && onMaster(a.Strategy) && a.Strategy != strategy.Naive { // naive's value is a constant: no holder tells from another
		go func() { twice <- secondGrants(kctx, rc, key, holder, granted.Add(a.Work)) }()
	}
	// 5. Sentinel promotes the replica; the old master rejoins, empty.
	if err := set.AwaitMaster(kctx, replica.Addr); err != nil {
		return r, err
	}
	r.Promoted = time.Since(r.killed)
	if drift != nil {
		if au, err := a.Shop.Audit(kctx, a.Product); err == nil {
			r.Phantom = max(offered-au.Stock, 0)
			drift.add(time.Since(began), offered-au.Stock)
		}
	}
	err := set.Rejoin(kctx)
	if r.Caught && onMaster(a.Strategy) && a.Strategy != strategy.Naive {
		r.GrantedTwice = <-twice
	}
	return r, err
}

// caughtUp waits until the replica's replication offset reaches the
// master's as it is now.
func caughtUp(ctx context.Context, set *redisproc.Set) error {
	m0, _, err := set.Offsets(ctx)
	if err != nil {
		return err
	}
	for {
		_, rep, err := set.Offsets(ctx)
		if err == nil && rep >= m0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fault: waiting for the replica to catch up: %w (last %v)", ctx.Err(), err)
		case <-time.After(5 * time.Millisecond): // the processes' state
		}
	}
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

// stockOn reads product's redis-decr stock on c; 0 when absent or
// unanswered.
func stockOn(ctx context.Context, c *redis.Client, product string) int {
	n, _ := strconv.Atoi(get(ctx, c, redisstock.StockKey(product)))
	return n
}

// get reads key on c: its value, "" when absent or unanswered.
func get(ctx context.Context, c *redis.Client, key string) string {
	v, _ := c.Get(ctx, key).Result()
	return v
}
