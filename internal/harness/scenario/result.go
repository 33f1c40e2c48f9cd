package scenario

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/why"
)

// StrategyResult is one row of the table: what one strategy's attack did to its
// product. It is filled by Run and read-only afterwards.
type StrategyResult struct {
	Strategy  Strategy
	ProductID string
	// Planned is how many clicks the crowd makes; Sent how many were sent
	// (fewer if Settings.Duration ended the attack first).
	Planned, Sent int
	// Tally counts the answers; Audit is the shop's own count of orders;
	// Events is what the shops counted beyond it, summed over the fleet.
	Tally  tally.Answers
	Audit  tally.Audit
	Events tally.Events
	// Metrics are Vegeta's figures: latency percentiles, rate, throughput.
	Metrics vegeta.Metrics
	// Records are what the run's faults measured in this attack, one per
	// fault that fired (fault.Find picks one out by its type).
	Records fault.Records
	// Drain records how a queued strategy's orders reached the database
	// after the last click (redis-queue only, else nil).
	Drain *tally.Drain
	// Lost counts the buyers told they have an order (201 or 202) whose
	// order was not written by the end of the drain (confirm).
	Lost int
	// EarlySoldOut counts the buyers told sold out before a later order
	// was even sent (tally.EarlySoldOut): a unit was left. Checked for
	// the rows whose stock is in buckets, where a missing fallback would
	// show; 0 for the others.
	EarlySoldOut int
	// Payments are what a sale with payments' payers were told
	// (Settings.Pay); nil without a pay window.
	Payments *tally.Payments
	// CPU is the fleet's CPU time over the attack (Fleet.CPU), -1 if
	// unknown.
	CPU time.Duration
	// Machine is the busy share of the whole machine's cores over the
	// attack, servers included (tally.MachineBusy), -1 if unknown.
	Machine float64
	// Products are a catalogue row's products, hottest first, each with
	// its own answers and audit; Tally, Audit, Events, Lost and
	// EarlySoldOut above are then their sums (tally.SumAudits). Nil for
	// a row of one product.
	Products []tally.ProductFigures
	// Load is each Redis Cluster master's part of the commands served
	// from the row's start to its end (tally.CommandsSince); nil without
	// a cluster.
	Load []tally.MasterLoad
	// HotMaster is the master that serves the row's first (hottest)
	// product's keys, where the cluster's meter says (tally.MasterFinder).
	HotMaster string
	// Why says in one line why the row came out as it did.
	Why string
	// Results are Vegeta's raw results, in the order they were answered.
	Results vegeta.Results
	// Runs are every run of this row under Settings.Count, this one among
	// them (package report's count.go); nil when the row ran once.
	Runs []*StrategyResult
}

// Elapsed is the attack's length, first request to last answer.
func (m *StrategyResult) Elapsed() time.Duration { return m.Metrics.Duration + m.Metrics.Wait }

// ReqPerSec is the rate at which requests were sent (Vegeta's Rate).
func (m *StrategyResult) ReqPerSec() float64 { return m.Metrics.Rate }

// OrdersPerSec is orders per second of attack: 201s and 202s.
func (m *StrategyResult) OrdersPerSec() float64 {
	if s := m.Elapsed().Seconds(); s > 0 {
		return float64(m.Tally.Accepted()) / s
	}
	return 0
}

// CPUPerOrder is the fleet's CPU time per order made (201), and
// CPUPerAnswer per request answered; ok is false if the CPU is unknown or
// nothing was made or answered.
func (m *StrategyResult) CPUPerOrder() (d time.Duration, ok bool) {
	return perCount(m.CPU, m.Tally.Accepted())
}

// CPUPerAnswer: see CPUPerOrder.
func (m *StrategyResult) CPUPerAnswer() (d time.Duration, ok bool) {
	return perCount(m.CPU, m.Tally.Requests)
}

func perCount(cpu time.Duration, n int) (time.Duration, bool) {
	if cpu < 0 || n == 0 {
		return 0, false
	}
	return cpu / time.Duration(n), true
}

// whyRow is what why.Line reads of res, a row run under s.
func whyRow(s Settings, res *StrategyResult) why.Row {
	return why.Row{
		Strategy: res.Strategy.Name(), Batched: res.Strategy.Batched(),
		Settings: why.Settings{LockTTL: s.LockTTL, Work: s.Work, Stall: s.Stall, LateCommit: s.LateCommit,
			StallRate: s.StallRate, Batch: s.Batch},
		Audit: res.Audit, Events: res.Events, Tally: res.Tally, Drain: res.Drain, Records: res.Records,
		Lost: res.Lost, Sent: res.Sent, Planned: res.Planned, Results: res.Results,
	}
}
