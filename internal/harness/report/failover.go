package report

import "github.com/flashsale/flashsale/internal/harness/fault"

// FailoverDoc records an attack's --failover rounds, with the totals the
// why-line quotes.
type FailoverDoc struct {
	Planned int `json:"planned"`
	Done    int `json:"done"`
	// GrantedTwice sums the rounds' (absent where the lock is not on the
	// master); FencedOut is the shops' count of refused stale holders.
	GrantedTwice      *int               `json:"granted_twice,omitempty"`
	FencedOut         int64              `json:"fenced_out"`
	PromotedMaxMs     float64            `json:"promoted_max_ms"`
	ResumedMaxSeconds float64            `json:"resumed_max_seconds"`
	Rounds            []FailoverRoundDoc `json:"rounds"`
	// Drift is redis-decr's, as the load generator read it; absent for
	// the other rows.
	Drift *FailoverDriftDoc `json:"drift,omitempty"`
	Error string            `json:"error,omitempty"`
}

// FailoverDriftDoc is redis-decr's drift through the failovers
// (fault.FailoverDrift): Redis's stock less the database's, at its peak
// and at the end, and the seconds from the last kill until it was back to
// 0 for good (-1 if it was not).
type FailoverDriftDoc struct {
	PeakUnits       int     `json:"peak_units"`
	RepairedSeconds float64 `json:"repaired_seconds"`
	EndUnits        int     `json:"end_units"`
	Samples         int     `json:"samples"`
}

// FailoverRoundDoc is one kill of the master (fault.FailoverRound).
// ResumedSeconds is -1 if no click sent after the kill was sold, and
// AfterCrowd true if, besides, the promotion came after the last click.
type FailoverRoundDoc struct {
	AtSeconds    float64 `json:"at_seconds"`
	PromotedMs   float64 `json:"promoted_ms"`
	HeldMs       float64 `json:"link_held_ms"`
	BehindBytes  int64   `json:"behind_bytes"`
	Caught       bool    `json:"caught_holder"`
	GrantedTwice *int    `json:"granted_twice,omitempty"`
	// PhantomUnits: redis-decr's promoted counter, less the database's
	// stock, when it was named the master.
	PhantomUnits   *int    `json:"phantom_units,omitempty"`
	ResumedSeconds float64 `json:"resumed_seconds"`
	AfterCrowd     bool    `json:"promoted_after_last_click,omitempty"`
}

// newFailoverDoc is f with units.
func newFailoverDoc(f *fault.Failover, fencedOut int64) *FailoverDoc {
	twice, promoted, resumed := f.Totals()
	d := &FailoverDoc{Planned: f.Planned, Done: len(f.Rounds), FencedOut: fencedOut,
		PromotedMaxMs: ms(promoted), ResumedMaxSeconds: resumed.Seconds(), Error: f.Err, Rounds: []FailoverRoundDoc{}}
	if resumed < 0 {
		d.ResumedMaxSeconds = -1
	}
	watched := false
	for _, r := range f.Rounds {
		rd := FailoverRoundDoc{AtSeconds: r.At.Seconds(), PromotedMs: ms(r.Promoted), HeldMs: ms(r.Held),
			BehindBytes: r.Behind, Caught: r.Caught, ResumedSeconds: r.Resumed.Seconds(), AfterCrowd: r.AfterCrowd}
		if r.Resumed < 0 {
			rd.ResumedSeconds = -1
		}
		if r.GrantedTwice >= 0 {
			n := r.GrantedTwice
			rd.GrantedTwice, watched = &n, true
		}
		if f.Drift != nil && r.Phantom >= 0 {
			n := r.Phantom
			rd.PhantomUnits = &n
		}
		d.Rounds = append(d.Rounds, rd)
	}
	if watched {
		d.GrantedTwice = &twice
	}
	if dr := f.Drift; dr != nil {
		d.Drift = &FailoverDriftDoc{PeakUnits: dr.Peak, RepairedSeconds: dr.Repaired.Seconds(), EndUnits: dr.End, Samples: dr.Samples}
		if dr.Repaired < 0 {
			d.Drift.RepairedSeconds = -1
		}
	}
	return d
}
