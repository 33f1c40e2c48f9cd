package scenario

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
)

// Options say where a run reports its progress.
type Options struct {
	// Progress receives the live line of each attack; nil prints nothing.
	Progress io.Writer
	// Terminal redraws the line in place with \r (see IsTerminal);
	// otherwise a plain line is printed each second.
	Terminal bool
	// Watch, if set, is sent each attack's figures several times a second
	// while it runs, and once more when it is over (Snapshot.Done), from
	// the goroutine running the attack; it must return quickly.
	Watch func(Snapshot)
	// RunID names this run's products ("d11-<RunID>-<strategy>", a + as -); it must be
	// unique among runs on the same database. Empty means the start time
	// to the millisecond.
	RunID string
}

// Outcome is everything one run measured: the settings, the machine, and
// one result per strategy, in the order the strategies ran.
type Outcome struct {
	Settings Settings
	Env      Env
	Targets  []string
	Backend  string
	// DoorSlots is how many orders the shops work on at once, all told
	// (fleet.Fleet.DoorSlots); 0 if unknown or unlimited.
	DoorSlots int
	// FaultMethods say how each fault struck this fleet ("redis-restart:
	// embedded nodes closed..."), one line per fault that acted.
	FaultMethods []string
	Started      time.Time
	Wall         time.Duration
	Strategies   []*StrategyResult
	// Skipped are the rows asked for that could not run here (Skipped).
	Skipped []Skipped
	// Sweep holds a --sweep's points (Sweep), Strategies then being empty.
	Sweep []SweepPoint
	// Flags are every flag's value as the command line would repeat it,
	// set by the caller for report.json; nil if not given.
	Flags map[string]string
	// Thresholds are the --threshold expressions, for the report to
	// evaluate (report.Check); nil if none.
	Thresholds []string
	// Parts is how many generators' parts of the crowd Merge put
	// together; 0 for a run of one generator.
	Parts int
	// Stopped says why the run ended before every row or point was
	// measured (too many open files, for one); "" if it did not.
	Stopped string
	// Instance is a part's run (Settings.Part), random: loadgen merge
	// tells two runs of one part apart by it. "" for the whole crowd.
	Instance string
}

// Unsafe lists the strategies that claim to be safe in this run but
// oversold, duplicated an order, lost an update or left Redis and the
// database apart: what --fail-on-unsafe fails on. Empty is good. Under
// --late-commit only the strategies that survive it are held to it (lua
// and redlock are expected to oversell there: that is the lesson), and no
// row is held to a fault the lesson expects to break it (fault.Breaks:
// redlock under an early --redis-restart of a majority of its nodes, lua
// under --failover).
func (o *Outcome) Unsafe() []string {
	if !o.Settings.Part.Whole() {
		return nil // a part is not audited: its merge is
	}
	var out []string
	for _, m := range o.allRuns() {
		claims := m.Strategy.Safe()
		if o.Settings.LateCommit > 0 {
			claims = m.Strategy.SurvivesLateCommit()
		}
		if fault.Breaks(o.Settings.Faults, m.Strategy.Name(), o.Settings.LockTTL) {
			claims = false
		}
		a := m.Audit
		drift := a.Drift != nil && *a.Drift != 0
		undrained := m.Drain != nil && m.Drain.Err != ""
		undersold := 0
		if a.Life != nil {
			undersold = a.Life.Undersold
		}
		if claims && (undersold > 0 || a.Oversold > 0 || a.DuplicateOrders > 0 || !a.Consistent || drift || m.Lost > 0 || undrained ||
			m.EarlySoldOut > 0) {
			line := fmt.Sprintf("%s: oversold %d, duplicate orders %d, consistent %v",
				m.Strategy, a.Oversold, a.DuplicateOrders, a.Consistent)
			if drift {
				line += fmt.Sprintf(", redis drift %d", *a.Drift)
			}
			if m.Lost > 0 {
				line += fmt.Sprintf(", %d orders answered 201/202 not written", m.Lost)
			}
			if undersold > 0 {
				line += fmt.Sprintf(", undersold %d (expired and never back on sale)", undersold)
			}
			if undrained {
				line += ", queue: " + m.Drain.Err
			}
			if m.EarlySoldOut > 0 {
				line += fmt.Sprintf(", %d told sold out while a unit was left", m.EarlySoldOut)
			}
			out = append(out, line)
		}
	}
	return out
}

// Run runs the scenario against fleet: for each strategy in s.Strategies it creates
// a fresh product, attacks it with the crowd at s.Rate, and reads the
// shop's audit. It returns the outcome so far with the first error: invalid
// settings (ErrInvalidSettings), a shop that refuses the product or the
// audit (ErrShop), a fault the fleet gives no control to strike
// (fault.ErrNoControl), a killed shop that did not come back, or ctx's
// error if ctx ends. Run is not meant to be called concurrently on the
// same fleet: the attacks would share the shops' CPU and locks.
func Run(ctx context.Context, s Settings, fl *fleet.Fleet, opts Options) (*Outcome, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(fl.Targets) == 0 {
		return nil, fmt.Errorf("%w: no targets", ErrInvalidSettings)
	}
	how, err := s.ready(fl)
	if err != nil {
		return nil, err
	}
	o := &Outcome{
		Settings: s, Env: CurrentEnv(), Targets: fl.Targets, Backend: fl.Backend, DoorSlots: fl.DoorSlots,
		FaultMethods: how, Started: time.Now(),
	}
	defer func() { o.Wall = time.Since(o.Started) }()
	if !s.Part.Whole() {
		o.Instance = rand.Text()
	}

	c := newCrowd(s).part(s.Part)
	runID := opts.RunID
	if runID == "" {
		runID = o.Started.Format("20060102-150405.000")
	}
	api := fleet.NewAPI(fl.Targets[0], fl.AdminToken)
	for _, strategy := range s.Strategies {
		var runs []*StrategyResult
		for n := range s.Runs() {
			a := &attack{
				settings: s, strategy: strategy, crowd: c, fleet: fl, api: api, opts: opts,
				productID: productBase(runID, strategy, n),
			}
			a.products = s.productIDs(a.productID)
			a.productID = a.products[0]
			res, err := a.run(ctx)
			var skip *skipError
			if errors.As(err, &skip) {
				o.Skipped = append(o.Skipped, skip.Skipped)
				break
			}
			if res != nil {
				runs = append(runs, res)
			}
			if err != nil {
				o.Strategies = appendRow(o.Strategies, runs)
				return o, fmt.Errorf("strategy %s: %w", strategy, err)
			}
		}
		o.Strategies = appendRow(o.Strategies, runs)
	}
	return o, nil
}

// productBase names the product of run n of strategy's row in run runID
// (a catalogue's products add -pNN to it).
func productBase(runID string, strategy Strategy, n int) string {
	return "d11-" + runID + "-" + strings.ReplaceAll(string(strategy), "+", "-") + runSuffix(n)
}
