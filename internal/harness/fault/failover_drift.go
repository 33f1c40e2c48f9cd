package fault

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// How driftWatch reads and when it is done: a reading every driftEvery;
// once the sale is over, the drift read at 0 or less for driftQuiet since
// the last promotion, as long as the shops take between two sweeps, counts
// as repaired for good. It waits for that at most driftSettleWithin.
const (
	driftEvery        = 100 * time.Millisecond
	driftQuiet        = time.Second
	driftSettleWithin = 15 * time.Second
)

// driftWatch reads redis-decr's drift through a failover attack: the
// database's stock (the shop's audit) first, then the stock on the master
// (master: every Sentinel names it, or the cluster serves the product's
// slot on it). Read in that order, no sale can show as drift: Redis took
// a sale's units before the database did, and a reservation given back was
// taken before. Nothing is read while there is no one master (master
// reports false), it does not answer, or the shop's audit could not reach
// Redis, as during a failover; each round adds the promoted counter's
// first reading itself.
type driftWatch struct {
	a      *Attack
	master func(context.Context) (addr string, ok bool)
	began  time.Time
	stop   context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []driftSample
}

// driftSample is one reading, at a time since the attack began.
type driftSample struct {
	at    time.Duration
	drift int
}

// watchDrift starts reading the drift of a's product, on the master that
// master names, until settle.
func watchDrift(ctx context.Context, a *Attack, master func(context.Context) (string, bool), began time.Time) *driftWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &driftWatch{a: a, master: master, began: began, stop: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

func (w *driftWatch) run(ctx context.Context) {
	defer close(w.done)
	clients := map[string]*redis.Client{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	t := time.NewTicker(driftEvery)
	defer t.Stop()
	for {
		if d, ok := w.read(ctx, clients); ok {
			w.add(time.Since(w.began), d)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// read reads the drift once; false if a backend did not answer.
func (w *driftWatch) read(ctx context.Context, clients map[string]*redis.Client) (int, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*driftEvery)
	defer cancel()
	au, err := w.a.Shop.Audit(ctx, w.a.Product)
	if err != nil || au.RedisStock == nil {
		return 0, false
	}
	addr, ok := w.master(ctx)
	if !ok {
		return 0, false
	}
	c := clients[addr]
	if c == nil {
		c = fleet.NodeClient(addr, 100*time.Millisecond)
		clients[addr] = c
	}
	left, err := c.Get(ctx, redisstock.StockKey(w.a.Product)).Int()
	if err != nil {
		return 0, false
	}
	return left - au.Stock, true
}

// add records a reading taken at, since the attack began.
func (w *driftWatch) add(at time.Duration, drift int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, driftSample{at, drift})
	slices.SortStableFunc(w.samples, func(a, b driftSample) int { return int(a.at - b.at) })
}

// quiet is how long the readings taken since since have shown no drift,
// up to the last one.
func (w *driftWatch) quiet(since time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.samples)
	if n == 0 || w.samples[n-1].drift > 0 || w.samples[n-1].at < since {
		return 0
	}
	from := n - 1
	for from > 0 && w.samples[from-1].drift <= 0 && w.samples[from-1].at >= since {
		from--
	}
	return w.samples[n-1].at - w.samples[from].at
}

// settle waits until the sale is over (stopped) and the drift has been
// quiet for driftQuiet since the last of rounds was promoted, or
// driftSettleWithin has passed, stops reading, and sums the readings up,
// measuring Repaired from the last kill.
func (w *driftWatch) settle(ctx context.Context, stopped <-chan struct{}, rounds []FailoverRound) *FailoverDrift {
	select {
	case <-stopped:
	case <-ctx.Done():
	}
	var promoted time.Duration
	if n := len(rounds); n > 0 {
		promoted = rounds[n-1].At + rounds[n-1].Promoted
	}
	end := time.Now().Add(driftSettleWithin)
	pollEvery(ctx, nil, driftEvery, func() bool { return w.quiet(promoted) >= driftQuiet || !time.Now().Before(end) })
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return sumDrift(w.samples, rounds)
}

// sentinelMaster is driftWatch's master under Sentinel: the one every
// Sentinel of set names, false while they disagree or do not answer.
func sentinelMaster(set *redisproc.Set) func(context.Context) (string, bool) {
	return func(ctx context.Context) (string, bool) {
		named := set.Named(ctx)
		if len(named) == 0 || strings.HasPrefix(named[0], "(") || slices.ContainsFunc(named, func(n string) bool { return n != named[0] }) {
			return "", false
		}
		return named[0], true
	}
}

// sumDrift sums readings up: the peak, the time from the last of rounds'
// kills to the first reading at 0 or less after the last positive one,
// and the last reading. The drift counts as repaired only if that last
// reading is exactly 0: below 0 during the sale is reservations on their
// way to the database, but below 0 at the end is units Redis lost.
func sumDrift(samples []driftSample, rounds []FailoverRound) *FailoverDrift {
	var lastKill time.Duration
	if len(rounds) > 0 {
		lastKill = rounds[len(rounds)-1].At
	}
	d := &FailoverDrift{Repaired: -1, Samples: len(samples)}
	lastPositive := -1
	for i, s := range samples {
		d.Peak = max(d.Peak, s.drift)
		if s.drift > 0 {
			lastPositive = i
		}
	}
	for _, s := range samples[lastPositive+1:] {
		if s.at >= lastKill {
			d.Repaired = s.at - lastKill
			break
		}
	}
	if n := len(samples); n > 0 {
		d.End = samples[n-1].drift
	}
	if d.End != 0 {
		d.Repaired = -1
	}
	return d
}
