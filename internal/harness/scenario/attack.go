package scenario

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// attack is one strategy's turn: a product, the crowd, and the fleet.
type attack struct {
	settings  Settings
	strategy  Strategy
	crowd     *crowd
	fleet     *fleet.Fleet
	api       *fleet.API
	opts      Options
	productID string
	// products are the row's products, hottest first: productID alone,
	// or a catalogue's (Settings.productIDs), productID being the first.
	products []string
	// merged: the results are other generators' (Merge), timed by their
	// clocks, not this one's: a drain is timed from the audit's start.
	merged bool
}

// drainFrom is the results a drain is timed from (tally.WaitDrain): rs,
// or none, timing it from now, when rs were timed by other machines.
func (a *attack) drainFrom(rs vegeta.Results) vegeta.Results {
	if a.merged {
		return nil
	}
	return rs
}

// run creates the product, attacks it, and audits it. It returns what it
// measured even when it also returns an error.
func (a *attack) run(ctx context.Context) (*StrategyResult, error) {
	s := a.settings
	if len(a.products) == 0 {
		a.products = []string{a.productID}
	}
	load := tally.CommandsSince(ctx, a.fleet.Commands) // the row's, creation and audit included
	// Create the products, or, in a part, wait for part 1 to.
	if err := a.createProducts(ctx); err != nil {
		return nil, err
	}
	tokens := newClickTokens(a.fleet.BuyerSecret, s, time.Now())
	tg := &targeter{targets: a.crowd.targets(a.fleet.Targets, a.products, tokens)}
	var pay *payer
	if s.Paying() {
		pay = newPayer(ctx, s, a.fleet.Targets, tokens)
	}
	res := &StrategyResult{Strategy: a.strategy, ProductID: a.productID, Planned: len(tg.targets)}
	defer func() {
		res.Load = load(ctx)
		if f, ok := a.fleet.Commands.(tally.MasterFinder); ok && res.Load != nil {
			res.HotMaster, _ = f.MasterOf(ctx, a.productID) // "" if unknown
		}
	}()

	// Start from a collected heap. The embedded shops share this process,
	// and an overloaded row leaves garbage that the next row's first GC
	// cycles would collect while it runs: the first quarter second of a
	// redis-queue row at 4,000 clicks/s after sql-atomic's ran at a p50 of
	// 13 ms instead of 0.5 ms. A --targets fleet's processes are not ours.
	runtime.GC() // before the faults' clocks start, and the CPU's
	stopped := make(chan struct{})
	fa := &fault.Attack{
		Strategy: a.strategy.Name(), Product: a.productID, Work: s.Work,
		Fleet: a.fleet, Shop: a.api, Stopped: stopped,
		Expected: min(s.Duration, time.Duration(float64(res.Planned)/s.PerSecond()*float64(time.Second))),
	}
	faults, err := s.arm(ctx, fa)
	if err != nil {
		close(stopped)
		stopFaults(ctx, faults, res)
		return res, err
	}

	cpu, machine := tally.Spent(ctx, a.fleet.CPU), tally.ReadMachine()
	atk, tr := newAttacker(s)
	defer tr.CloseIdleConnections()
	conns := &connSet{}
	tr.DialContext = conns.dial(tr.DialContext)
	results := atk.Attack(tg.Targeter(), newPacer(s.Part.rate(s.VegetaRate()), res.Planned), s.Duration, string(a.strategy))

	prog := newProgress(a.opts.Progress, a.opts.Terminal, string(a.strategy))
	watch := a.watch(ctx)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	done := ctx.Done()
	var ctxErr, filesErr error
	for results != nil {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				break
			}
			if err := outOfFiles(r, tg.Sent()); err != nil && filesErr == nil {
				// Send no more, and end the requests in flight: their
				// descriptors are what the report needs to be written.
				filesErr = err
				atk.Stop()
				conns.closeAll()
			}
			res.Tally.Add(r)
			if pay != nil {
				pay.won(r)
			}
			res.Metrics.Add(r)
			// Kept for the audit and the report, all but the headers,
			// which nothing reads: a map per click, for the GC to mark
			// again at every cycle of the rows that follow.
			r.Headers = nil
			res.Results = append(res.Results, *r)
			prog.update(tg.Sent(), &res.Tally)
			watch.update(tg.Sent(), res)
		case <-tick.C:
			prog.update(tg.Sent(), &res.Tally)
			watch.update(tg.Sent(), res)
		case <-done:
			ctxErr, done = ctx.Err(), nil
			atk.Stop()
		}
	}
	if pay != nil {
		// The payments in flight, before the faults stop; the live page
		// goes on showing them land.
		p := pay.wait(func() { watch.update(tg.Sent(), res) })
		res.Payments = &p
	}
	prog.done(tg.Sent(), &res.Tally)
	// The attack's connections go now, not after the audit: an open crowd
	// leaves thousands of them idle, each two descriptors in a process that
	// also runs the shops, and the audit's lookups need new ones.
	tr.CloseIdleConnections()
	res.CPU, res.Machine = cpu(), tally.MachineBusy(machine, tally.ReadMachine())
	close(stopped)
	faultErr := stopFaults(ctx, faults, res) // once the nodes and shops serve again
	res.Metrics.Close()
	exactLatencies(&res.Metrics, res.Results)
	res.Sent = tg.Sent()
	if ctxErr != nil {
		watch.finish(res)
		return res, ctxErr
	}
	if filesErr != nil {
		watch.finish(res)
		return nil, filesErr // half an attack, and no audit: not a row to report
	}
	defer watch.finish(res) // after the audit below, whatever it says
	if faultErr != nil {
		return res, faultErr // a shop that did not come back: the audit would not be whole
	}
	if !s.Part.Whole() {
		res.Why = "part " + s.Part.String() + " of the crowd: the audit is loadgen merge's, once every part is done"
		return res, nil
	}
	return res, a.audit(ctx, res, faults, func() { watch.update(res.Sent, res) })
}

// product is the product a strategy's attack sells, under s.
func product(id string, row Strategy, s Settings) fleet.Product {
	p := fleet.Product{
		ID: id, Name: "双11 " + string(row), Stock: s.Stock, Strategy: string(row.Name()),
		LockTTLMs: s.LockTTL.Milliseconds(), WorkMs: s.Work.Milliseconds(),
		StallMs: s.Stall.Milliseconds(), StallRate: s.StallRate,
		LateCommitMs: s.LateCommit.Milliseconds(), LateCommitEvery: s.LateCommitEvery,
		PayWithinMs: s.PayWithin.Milliseconds(),
	}
	if row.Batched() {
		p.BatchMax = s.Batch
	}
	p.Buckets = row.Buckets()
	if p.Buckets == 0 && row.Name() == strategy.SQLAtomic {
		p.Buckets = s.Buckets
	}
	return p
}

// newAttacker is the Vegeta attacker of every attack, and of Ceiling, and
// the transport under it, whose idle connections the caller closes when the
// attack is over; s gives its timeout and workers. A new attacker is needed
// per attack: an Attacker stops for good when its attack ends.
func newAttacker(s Settings) (*vegeta.Attacker, *http.Transport) {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 10000, // keep-alive: every worker keeps its connection to its shop
		IdleConnTimeout:     90 * time.Second,
	}
	atk := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: tr}), // first: the options below adjust tr
		vegeta.KeepAlive(true),                     // reuse connections: the generator must not be the bottleneck
		vegeta.Workers(s.workers()),                // initial senders; Vegeta adds more when they are all busy
		vegeta.MaxWorkers(s.maxWorkers()),          // at most this many requests in flight
		vegeta.MaxBody(4096),                       // enough for the error code in the answer
		vegeta.Timeout(s.timeout()),                // a shop that hangs shows as failed requests
		vegeta.Redirects(vegeta.NoFollow),          // the API never redirects
	)
	return atk, tr
}

// lookups are the fleet's shops, for tally.Unwritten to spread its
// lookups over.
func (a *attack) lookups() []tally.OrderLookup {
	out := make([]tally.OrderLookup, len(a.fleet.Targets))
	for i, t := range a.fleet.Targets {
		out[i] = fleet.NewAPI(t, a.fleet.AdminToken)
	}
	return out
}

// events sums what every shop of the fleet counted for product: each
// counts only its own orders.
func (a *attack) events(ctx context.Context, product string) (tally.Events, error) {
	var sum tally.Events
	for _, t := range a.fleet.Targets {
		e, err := fleet.NewAPI(t, a.fleet.AdminToken).Events(ctx, product)
		if err != nil {
			return sum, err
		}
		sum.Add(e)
	}
	return sum, nil
}
