package report

import (
	"encoding/json"
	"io"
	"maps"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// Document is the content of report.json: every figure of every row, the
// settings, and the machine. Units are in the field names. Read it back
// with encoding/json.
type Document struct {
	GeneratedAt time.Time    `json:"generated_at"`
	WallSeconds float64      `json:"wall_seconds"`
	Env         scenario.Env `json:"env"`
	Backend     string       `json:"backend"`
	Targets     []string     `json:"targets"`
	// FaultMethods say how each fault struck the fleet.
	FaultMethods []string      `json:"fault_methods,omitempty"`
	Settings     SettingsDoc   `json:"settings"`
	Strategies   []StrategyDoc `json:"strategies"`
	// Skipped are the strategies asked for that could not run here, with why.
	Skipped []SkippedDoc `json:"skipped,omitempty"`
	Unsafe  []string     `json:"unsafe"`
	Columns []string     `json:"columns"`
	Table   [][]string   `json:"table"`
	// LifeColumns and LifeTable are a sale with payments' second table
	// (LifeRows), as the terminal and report.md show it; absent without a
	// pay window. The figures behind it are each row's audit.life,
	// events.returned and payments.
	LifeColumns []string   `json:"life_columns,omitempty"`
	LifeTable   [][]string `json:"life_table,omitempty"`
	// Flags are every flag's value, as the command line would repeat them
	// (defaults included); Thresholds the --threshold results; Sweep a
	// --sweep's points (Strategies and Table are then empty).
	Flags      map[string]string `json:"flags,omitempty"`
	Thresholds *ThresholdsDoc    `json:"thresholds,omitempty"`
	Sweep      *SweepDoc         `json:"sweep,omitempty"`
	// Parts is how many generators' parts of the crowd loadgen merge put
	// together (scenario.Merge); absent for one generator. Stopped says
	// why the run ended before its last row or point; absent if it did
	// not.
	Parts   int    `json:"parts,omitempty"`
	Stopped string `json:"stopped,omitempty"`
	// PartRun is what loadgen merge checks of a part of a crowd; absent
	// for the whole crowd.
	PartRun *PartRunDoc `json:"part_run,omitempty"`
}

// PartRunDoc is a part of a crowd's run (loadgen --part), as loadgen
// merge checks it.
type PartRunDoc struct {
	// Instance is random, one per run of a part: two folders that hold
	// the same are one run given twice.
	Instance string `json:"instance"`
	// Finished is true if the part sent every row and was not stopped
	// (Stopped says why it was).
	Finished bool `json:"finished"`
}

// SpanDoc is a part's scenario.Span of one row: StartedAt by its wall
// clock, the seconds by its monotonic clock.
type SpanDoc struct {
	StartedAt     time.Time `json:"started_at"`
	SendSeconds   float64   `json:"send_seconds"`
	WaitSeconds   float64   `json:"wait_seconds"`
	PeriodSeconds float64   `json:"period_seconds"`
}

// Span is d as a scenario.Span.
func (d SpanDoc) Span() scenario.Span {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	return scenario.Span{Started: d.StartedAt, Send: sec(d.SendSeconds), Wait: sec(d.WaitSeconds), Period: sec(d.PeriodSeconds)}
}

// SettingsDoc is scenario.Settings with units.
type SettingsDoc struct {
	Strategies      []string `json:"strategies"`
	Users           int      `json:"users"`
	Stock           int      `json:"stock"`
	Clicks          int      `json:"clicks"`
	ClickWindowMs   float64  `json:"click_window_ms"`
	RatePerSecond   int      `json:"rate_per_second"`
	DurationSeconds float64  `json:"duration_seconds"`
	LockTTLMs       float64  `json:"lock_ttl_ms"`
	WorkMs          float64  `json:"work_ms"`
	StallMs         float64  `json:"stall_ms"`
	StallRate       float64  `json:"stall_rate"`
	Seed            uint64   `json:"seed"`
	// Faults are the flags of the run's faults, by name, with their
	// values ("crash": "2").
	Faults          map[string]string `json:"faults,omitempty"`
	LateCommitMs    float64           `json:"late_commit_ms"`
	LateCommitEvery int               `json:"late_commit_every"`
	// Pay, PayWithinMs and LatePay are a sale with payments' (--pay,
	// --pay-within, --late-pay); absent without.
	Pay             float64 `json:"pay,omitempty"`
	PayWithinMs     float64 `json:"pay_within_ms,omitempty"`
	LatePay         bool    `json:"late_pay,omitempty"`
	PlannedRequests int     `json:"planned_requests"`
	// RTT is the round-trip time on the shops' links (netsim.RTT's
	// String: "2ms", "db=2ms,redis=500µs"); absent on loopback as it is.
	RTT string `json:"rtt,omitempty"`
	// Products and Skew are a catalogue's (--products, --skew); absent
	// for one product.
	Products int     `json:"products,omitempty"`
	Skew     float64 `json:"skew,omitempty"`
	LoadSettingsDoc
}

// StrategyDoc is one row with every figure behind it.
type StrategyDoc struct {
	Strategy    string        `json:"strategy"`
	ProductID   string        `json:"product_id"`
	Planned     int           `json:"planned_requests"`
	Sent        int           `json:"sent_requests"`
	Answers     tally.Answers `json:"answers"`
	DupRejected int           `json:"dup_rejected"`
	ErrorsTotal int           `json:"errors_total"`
	Audit       tally.Audit   `json:"audit"`
	// Events are what the shops counted beyond the audit, summed.
	Events tally.Events `json:"events"`
	// Payments are what a sale with payments' payers were told; absent
	// without a pay window.
	Payments     *tally.Payments `json:"payments,omitempty"`
	ElapsedSecs  float64         `json:"elapsed_seconds"`
	ReqPerSec    float64         `json:"req_per_second"`
	OrdersPerSec float64         `json:"orders_per_second"`
	// CPUPerOrder and CPUPerAnswer are the fleet's CPU milliseconds per
	// order made and per request answered (tally.CPUMeter says whose
	// CPU); absent if unknown.
	CPUPerOrder  *float64 `json:"cpu_ms_per_order,omitempty"`
	CPUPerAnswer *float64 `json:"cpu_ms_per_answer,omitempty"`
	// Throughput is Vegeta's: 2xx/3xx answers per second.
	Throughput float64      `json:"throughput_2xx_per_second"`
	Latency    LatencyDoc   `json:"latency_ms"`
	Kill       *KillDoc     `json:"kill,omitempty"`
	Restart    *RestartDoc  `json:"restart,omitempty"`
	Failover   *FailoverDoc `json:"failover,omitempty"`
	Crash      *CrashDoc    `json:"crash,omitempty"`
	// Drain is how a queued strategy's queue drained after the last click.
	Drain *DrainDoc `json:"drain,omitempty"`
	// LostOrders counts buyers answered 201 or 202 whose order was not
	// written by the end of the drain.
	LostOrders int `json:"lost_orders"`
	// EarlySoldOut counts buyers told sold out before a later order was
	// sent, in a row whose stock is in buckets (tally.EarlySoldOut).
	EarlySoldOut int `json:"early_sold_out,omitempty"`
	// Products are a catalogue row's products, hottest first, each with
	// its own answers and audit (the figures above are their sums);
	// absent for one product.
	Products []tally.ProductFigures `json:"products,omitempty"`
	// Load is each Redis Cluster master's part of the row's commands;
	// absent without a cluster.
	Load []tally.MasterLoad `json:"load_per_master,omitempty"`
	// HotMaster is the master of the row's first product's keys.
	HotMaster string `json:"hot_master,omitempty"`
	// Span is a part's attack on the row, for loadgen merge; absent for
	// the whole crowd.
	Span       *SpanDoc `json:"span,omitempty"`
	Why        string   `json:"why"`
	RawResults string   `json:"raw_results"`
	// Figures are the row's figures by name (Figures), as --threshold and
	// loadgen compare read them; with --count, those of the run that stands
	// for the row, and Spread each one's median and min–max over Runs runs.
	Figures map[string]float64 `json:"figures"`
	Runs    int                `json:"runs"`
	Spread  map[string]Spread  `json:"spread,omitempty"`
}

// LatencyDoc holds Vegeta's latency figures in milliseconds.
type LatencyDoc struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// DrainDoc records a queued strategy's drain (tally.Drain).
type DrainDoc struct {
	// Seconds from the last click until nothing was left to write.
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// KillDoc records a --redlock-kill or --etcd-kill; nodes are numbered
// from 1.
type KillDoc struct {
	Nodes     []int   `json:"nodes"`
	AtSeconds float64 `json:"at_seconds"`
	Error     string  `json:"error,omitempty"`
}

// RestartDoc records a --redis-restart; nodes are numbered from 1.
type RestartDoc struct {
	Nodes []int `json:"nodes"`
	// Restarted is false if no holder was seen taking the lock before the
	// attack ended, and nothing was restarted.
	Restarted bool `json:"restarted"`
	// AtSeconds is when the nodes went down, BackSeconds when they served
	// again, since the attack began; DelayMs how long they were to stay
	// down.
	AtSeconds   float64 `json:"at_seconds"`
	BackSeconds float64 `json:"back_seconds"`
	DelayMs     float64 `json:"delay_ms"`
	// GrantedWhileHeld counts the other tokens seen on a majority of the
	// nodes while the caught holder's token was still on a node that was
	// not restarted: locks granted twice. Absent where that cannot be
	// seen (fenced's one node, or every node restarted).
	GrantedWhileHeld *int   `json:"granted_while_held,omitempty"`
	Error            string `json:"error,omitempty"`
}

// NewDocument builds the report.json content of o.
func NewDocument(o *scenario.Outcome) Document {
	s := o.Settings
	d := Document{
		GeneratedAt:  o.Started.Add(o.Wall).UTC(),
		WallSeconds:  o.Wall.Seconds(),
		Env:          o.Env,
		Backend:      o.Backend,
		Targets:      o.Targets,
		FaultMethods: o.FaultMethods,
		Settings: SettingsDoc{
			Users: s.Users, Stock: s.Stock, Clicks: s.Clicks, ClickWindowMs: ms(s.ClickWindow),
			RatePerSecond: s.Rate, DurationSeconds: s.Duration.Seconds(), LockTTLMs: ms(s.LockTTL),
			WorkMs: ms(s.Work), StallMs: ms(s.Stall), StallRate: s.StallRate, Seed: s.Seed,
			LateCommitMs: ms(s.LateCommit), LateCommitEvery: s.LateCommitEvery,
			Pay: s.Pay, PayWithinMs: ms(s.PayWithin), LatePay: s.LatePay,
			PlannedRequests: s.PlannedRequests(),
		},
		Unsafe:  o.Unsafe(),
		Columns: Columns,
		Table:   Rows(o),
		Flags:   o.Flags,
		Parts:   o.Parts,
		Stopped: o.Stopped,
	}
	for _, sk := range o.Skipped {
		d.Skipped = append(d.Skipped, SkippedDoc{Strategy: string(sk.Strategy), Why: sk.Why})
	}
	if rows := LifeRows(o); len(rows) > 0 {
		d.LifeColumns, d.LifeTable = LifeColumns, rows
	}
	d.Settings.LoadSettingsDoc = newLoadSettingsDoc(s)
	if !s.RTT.IsZero() {
		d.Settings.RTT = s.RTT.String()
	}
	if s.Catalogue() {
		d.Settings.Products, d.Settings.Skew = s.Products, s.Skew
	}
	d.Thresholds, d.Sweep = newThresholdsDoc(o), newSweepDoc(o)
	if !s.Part.Whole() {
		d.PartRun = &PartRunDoc{Instance: o.Instance, Finished: o.Stopped == ""}
	}
	if d.Unsafe == nil {
		d.Unsafe = []string{}
	}
	for _, m := range s.Strategies {
		d.Settings.Strategies = append(d.Settings.Strategies, string(m))
	}
	for _, f := range s.Faults {
		if d.Settings.Faults == nil {
			d.Settings.Faults = map[string]string{}
		}
		maps.Copy(d.Settings.Faults, fault.Values(f))
	}
	for _, m := range o.Strategies {
		l := m.Metrics.Latencies
		md := StrategyDoc{
			Strategy: string(m.Strategy), ProductID: m.ProductID, Planned: m.Planned, Sent: m.Sent,
			Answers: m.Tally, DupRejected: m.Tally.DupRejected(), ErrorsTotal: m.Tally.ErrorCount(),
			Audit: m.Audit, Events: m.Events, Payments: m.Payments, ElapsedSecs: m.Elapsed().Seconds(), ReqPerSec: m.ReqPerSec(),
			OrdersPerSec: m.OrdersPerSec(), Throughput: m.Metrics.Throughput,
			Latency: LatencyDoc{
				Mean: ms(l.Mean), Min: ms(l.Min), P50: ms(l.P50), P90: ms(l.P90),
				P95: ms(l.P95), P99: ms(l.P99), Max: ms(l.Max),
			},
			Why: m.Why, RawResults: RawFile(string(m.Strategy)), LostOrders: m.Lost, EarlySoldOut: m.EarlySoldOut,
			Figures: figureValues(o, m), Runs: max(len(m.Runs), 1), Spread: spreads(m), Products: m.Products, Load: m.Load, HotMaster: m.HotMaster,
		}
		if !s.Part.Whole() {
			sp := scenario.SpanOf(s, m)
			md.Span = &SpanDoc{StartedAt: sp.Started.UTC(), SendSeconds: sp.Send.Seconds(), WaitSeconds: sp.Wait.Seconds(), PeriodSeconds: sp.Period.Seconds()}
		}
		if dr := m.Drain; dr != nil {
			md.Drain = &DrainDoc{Seconds: dr.Took.Seconds(), Error: dr.Err}
		}
		if d, ok := m.CPUPerOrder(); ok {
			v := ms(d)
			md.CPUPerOrder = &v
		}
		if d, ok := m.CPUPerAnswer(); ok {
			v := ms(d)
			md.CPUPerAnswer = &v
		}
		if k := fault.Find[*fault.Kill](m.Records); k != nil {
			kd := &KillDoc{AtSeconds: k.At.Seconds(), Error: k.Err}
			for _, n := range k.Nodes {
				kd.Nodes = append(kd.Nodes, n+1)
			}
			md.Kill = kd
		}
		if r := fault.Find[*fault.Restart](m.Records); r != nil {
			md.Restart = newRestartDoc(r)
		}
		if f := fault.Find[*fault.Failover](m.Records); f != nil {
			md.Failover = newFailoverDoc(f, m.Events.FencedOut)
		}
		if c := fault.Find[*fault.Crash](m.Records); c != nil {
			md.Crash = newCrashDoc(c)
		}
		d.Strategies = append(d.Strategies, md)
	}
	return d
}

// newRestartDoc is r with units, its nodes numbered from 1.
func newRestartDoc(r *fault.Restart) *RestartDoc {
	d := &RestartDoc{Restarted: r.Restarted, AtSeconds: r.At.Seconds(), BackSeconds: r.Back.Seconds(),
		DelayMs: ms(r.Delay), Error: r.Err}
	for _, n := range r.Nodes {
		d.Nodes = append(d.Nodes, n+1)
	}
	if r.GrantedWhileHeld >= 0 {
		n := r.GrantedWhileHeld
		d.GrantedWhileHeld = &n
	}
	return d
}

// ms converts d to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeJSON(w io.Writer, o *scenario.Outcome) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewDocument(o))
}
