package fault

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/faultproxy"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/strategy"
)

// ClusterFailover is --cluster-failover: --failover's lesson on a Redis
// Cluster of the load generator's own (three masters, a replica each), on
// which the shops put every role but redlock's. A Cluster replicates as
// Sentinel's master does, asynchronously; when the master of a slot dies,
// the other masters elect its replica in its place, whatever it had not
// heard of yet. In each attack, Rounds times:
//
//  1. the master of the product's slot announces a fault proxy's port
//     (CONFIG SET cluster-announce-port: a cluster node refuses
//     REPLICAOF), so that its replica replicates through the proxy, which
//     holds that connection alone (faultproxy.HoldOnly; clients sent there
//     pass);
//  2. the proxy holds the link at the master's next grant of the product
//     lock (grantCut), as --failover does; redis-decr's and redis-queue's
//     rounds hold it until the master has taken a unit its replica still
//     offers (and, for redis-decr, the database has sold it), the others'
//     for a moment;
//  3. the master is SIGKILLed; the cluster counts it as failing after
//     ClusterFailoverNodeTimeout and promotes the replica;
//  4. the old master starts again on its port with its nodes file, and
//     rejoins as the new master's replica.
//
// The sale is --failover's (SentinelFailover.Defaults), with redis-queue
// beside redis-decr: its accepted orders live on that master too.
type ClusterFailover struct {
	Enabled bool
	Rounds  int
}

// ClusterFailoverNodeTimeout is the cluster's cluster-node-timeout: a
// promotion takes it and one to two seconds more, well inside
// FailoverWork.
const ClusterFailoverNodeTimeout = time.Second

func init() { register(func() Fault { return &ClusterFailover{Rounds: DefaultFailovers} }) }

// Flags registers --cluster-failover and --cluster-failovers.
func (cf *ClusterFailover) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&cf.Enabled, "cluster-failover", cf.Enabled, "start a Redis Cluster (six redis-server nodes, joined by redis-cli) for the shops' single-node locks, stock and queue, and in each attack kill the master of the product's slot right after it granted a lock its held replica never got, letting the cluster promote the replica; the sale of --failover unless given, with redis-queue too (default off)")
	fs.IntVar(&cf.Rounds, "cluster-failovers", cf.Rounds, "with --cluster-failover, how many times each attack kills the slot's master")
}

// On reports whether --cluster-failover was given.
func (cf *ClusterFailover) On() bool { return cf.Enabled }

// Strikes reports true: every attack's slot master is killed.
func (cf *ClusterFailover) Strikes(strategy.Name) bool { return true }

// Check says what is wrong with the settings in a run of p: it kills only
// a cluster it started, and one failover at a time.
func (cf *ClusterFailover) Check(p Plan) []string {
	var bad []string
	if cf.Rounds < 0 || cf.Rounds > MaxFailovers {
		bad = append(bad, fmt.Sprintf("cluster-failovers: %d, want 0..%d per attack", cf.Rounds, MaxFailovers))
	}
	switch {
	case !cf.Enabled && cf.Rounds != DefaultFailovers:
		bad = append(bad, "cluster-failovers: only with --cluster-failover")
	case cf.Enabled && (p.Cluster || p.Targets):
		bad = append(bad, "cluster-failover: not with --redis-cluster or --targets: the load generator kills only a cluster it started")
	case cf.Enabled && p.Sentinels:
		bad = append(bad, "cluster-failover: not with --redis-sentinel: the single-node roles go to the cluster it starts")
	case cf.Enabled && p.Sweep:
		bad = append(bad, "sweep: not with --cluster-failover: a sweep measures throughput, a failover a crash")
	}
	if cf.Enabled && slices.Contains(p.Bucketed, strategy.RedisDecr) {
		bad = append(bad, "cluster-failover: not with a redis-decr+kK row: a round kills the master of the product's own slot and reads the product's own stock key, and a bucketed product's stock is in its K buckets' slots")
	}
	return bad
}

// Ready says how the master dies.
func (cf *ClusterFailover) Ready(fl *fleet.Fleet) (string, error) {
	if fl.Cluster == nil {
		return "", fmt.Errorf("%w: --cluster-failover needs a fleet with a Redis Cluster of its own (fleet.FleetConfig.StartCluster)", ErrNoControl)
	}
	return "the Redis Cluster's master of the product's slot SIGKILLed, its replica's link held through a fault proxy", nil
}

// Provision has the fleet start the cluster.
func (cf *ClusterFailover) Provision(cfg *fleet.FleetConfig) {
	cfg.StartCluster, cfg.ClusterNodeTimeout = true, ClusterFailoverNodeTimeout
}

// Defaults are --failover's sale, with redis-queue.
func (cf *ClusterFailover) Defaults() []Default {
	d := (&SentinelFailover{}).Defaults()
	d[len(d)-1].Value = "naive,lua,fenced,redis-decr,redis-queue,redlock,etcd,sql-atomic"
	return d
}

// Breaks reports whether the failovers break a row of st: lua's lock is
// granted again, and redis-queue loses the orders it accepted on the
// master alone and had not written (a replica does not make a queue
// durable).
func (cf *ClusterFailover) Breaks(st strategy.Name, _ time.Duration) bool {
	return st == strategy.Lua || st == strategy.RedisQueue
}

// Arm starts a's rounds, one after the other, and returns once the first
// round's hold is in place or set (at once if none can begin).
func (cf *ClusterFailover) Arm(ctx context.Context, a *Attack) (Armed, error) {
	fo := &failingOver{attack: a, out: make(chan *Failover, 1)}
	if cf.Rounds == 0 {
		fo.out <- nil
		return fo, nil
	}
	c, held, began := a.Fleet.Cluster, make(chan struct{}), time.Now()
	arm := sync.OnceFunc(func() { close(held) })
	key := order.ProductKey(a.Product)
	go func() {
		defer arm()
		rec := &Failover{Planned: cf.Rounds, Cluster: true}
		var drift *driftWatch
		if a.Strategy == strategy.RedisDecr {
			drift = watchDrift(ctx, a, func(ctx context.Context) (string, bool) {
				sh, err := c.SlotShard(ctx, key)
				return sh.Master.Addr, err == nil
			}, began)
		}
		runRounds(rec, arm, func() bool { return true }, func() (*FailoverRound, error) {
			return clusterRound(ctx, a, c, began, arm, drift)
		})
		if drift != nil {
			rec.Drift = drift.settle(ctx, a.Stopped, rec.Rounds)
		}
		fo.out <- rec
	}()
	<-held
	return fo, nil
}

// clusterRound is one round (see ClusterFailover), as failingOver.round is
// under Sentinel: nil, nil if the attack stopped before the kill. Every way
// out leaves the cluster whole for the next attack, on contexts of its own
// that start when they are needed (a hold may outlast the attack's
// context, and rctx): before the kill the master announces its own port
// again; after it the old master runs again, as its replica's replica, or,
// if the cluster never promoted the replica, as the master it was.
func clusterRound(ctx context.Context, a *Attack, c *redisproc.Cluster, began time.Time, held func(), drift *driftWatch) (*FailoverRound, error) {
	rctx, cancel := restoreContext(ctx)
	defer cancel()
	key := order.ProductKey(a.Product)
	sh, err := c.SlotShard(rctx, key)
	if err == nil && len(sh.Replicas) != 1 {
		err = fmt.Errorf("fault: the master of %s's slot has %d replicas, want 1", a.Product, len(sh.Replicas))
	}
	if err != nil {
		return nil, err
	}
	master, replica := sh.Master, sh.Replicas[0]
	unannounce := func() error {
		ctx, cancel := restoreContext(ctx)
		defer cancel()
		return c.Announce(ctx, master, 0)
	}
	// 0. The replica follows the master through the link, caught up.
	link, err := faultproxy.New(master.Addr)
	if err != nil {
		return nil, err
	}
	defer link.Close()
	link.HoldOnly(func(b []byte) bool { return bytes.Contains(bytes.ToUpper(b), []byte("PSYNC")) })
	_, p, _ := net.SplitHostPort(link.Addr())
	port, _ := strconv.Atoi(p)
	if err := c.Announce(rctx, master, port); err != nil {
		return nil, errors.Join(err, unannounce())
	}
	if !pollEvery(rctx, nil, 20*time.Millisecond, func() bool { return c.Follows(rctx, replica, port) && clusterCaughtUp(rctx, c, master, replica) }) {
		return nil, errors.Join(fmt.Errorf("fault: the replica %s did not follow the link %s: %w", replica.Addr, link.Addr(), rctx.Err()), unannounce())
	}
	r := &FailoverRound{GrantedTwice: -1, Phantom: -1}
	stopped, mc, rc := a.Stopped, master.Client, replica.Client
	var holder string
	var granted, heldAt time.Time
	switch {
	case onMaster(a.Strategy):
		// 1. Held at the master's next grant, complete (naive's PEXPIRE
		// follows its SETNX), which the replica never heard of.
		link.HoldAt(grantCut(key))
		held()
		if !poll(ctx, stopped, link.Held) || !poll(ctx, stopped, func() bool { return mc.PTTL(ctx, key).Val() > 0 }) {
			return nil, unannounce()
		}
		heldAt, granted, holder = time.Now(), time.Now(), get(ctx, mc, key)
		if r.Caught = c.Follows(rctx, replica, port) && (a.Strategy == strategy.Naive || get(ctx, rc, key) != holder); !r.Caught {
			link.Release()
			return nil, errors.Join(errReplicated, unannounce())
		}
	default:
		// 1. Held; redis-decr and redis-queue wait until the master took a
		// unit the replica still offers (redis-decr: and the database
		// sold it), the others a moment.
		link.Hold()
		heldAt = time.Now()
		held()
		var wait <-chan struct{}
		until := func() bool { return time.Since(heldAt) >= failoverMoment }
		if offered := stockOn(ctx, rc, a.Product); offered > 0 && (a.Strategy == strategy.RedisDecr || a.Strategy == strategy.RedisQueue) {
			wait, until = stopped, func() bool {
				if stockOn(ctx, mc, a.Product) >= offered {
					return false
				}
				au, err := a.Shop.Audit(ctx, a.Product)
				return a.Strategy == strategy.RedisQueue || err == nil && au.Stock < offered
			}
			r.Caught = true
		}
		if !pollEvery(ctx, wait, 20*time.Millisecond, until) {
			link.Release()
			return nil, unannounce()
		}
	}
	if m, rep, err := c.Offsets(rctx, master, replica); err == nil {
		r.Behind = m - rep
	}
	// 2. The kill: what the link held dies with it.
	c.Kill(master)
	r.killed = time.Now()
	link.Stop()
	kctx, kcancel := restoreContext(ctx) // rctx may be spent by a long hold
	defer kcancel()
	r.At, r.Held = r.killed.Sub(began), r.killed.Sub(heldAt)
	offered := stockOn(kctx, rc, a.Product)
	twice := make(chan int, 1)
	watchTwice := r.Caught && onMaster(a.Strategy) && a.Strategy != strategy.Naive
	if watchTwice {
		go func() { twice <- secondGrants(kctx, rc, key, holder, granted.Add(a.Work)) }()
	}
	// 3. The cluster promotes the replica; 4. the old master rejoins.
	if err := c.AwaitMaster(kctx, replica); err != nil {
		// Never promoted: the old master, back, serves its slots again.
		bctx, cancel := restoreContext(ctx)
		defer cancel()
		return r, errors.Join(err, c.Rejoin(bctx, master))
	}
	r.Promoted = time.Since(r.killed)
	if drift != nil {
		if au, err := a.Shop.Audit(kctx, a.Product); err == nil {
			r.Phantom = max(offered-au.Stock, 0)
			drift.add(time.Since(began), offered-au.Stock)
		}
	}
	err = c.Rejoin(kctx, master)
	if watchTwice {
		r.GrantedTwice = <-twice
	}
	return r, err
}

// clusterCaughtUp reports whether replica's offset has reached master's.
func clusterCaughtUp(ctx context.Context, c *redisproc.Cluster, master, replica *redisproc.Process) bool {
	m, r, err := c.Offsets(ctx, master, replica)
	return err == nil && r >= m
}

// restoreContext bounds a round's waits on the processes by
// restoreBound from now; it outlives ctx (Ctrl-C), so that what a round
// took apart is put back.
func restoreContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), restoreBound())
}
