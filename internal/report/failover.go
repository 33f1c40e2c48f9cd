package report

import "github.com/flashsale/flashsale/internal/scenario"

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
	Error             string             `json:"error,omitempty"`
}

// FailoverRoundDoc is one kill of the master (scenario.FailoverRound).
// ResumedSeconds is -1 if no click sent after the kill was sold.
type FailoverRoundDoc struct {
	AtSeconds      float64 `json:"at_seconds"`
	PromotedMs     float64 `json:"promoted_ms"`
	HeldMs         float64 `json:"link_held_ms"`
	BehindBytes    int64   `json:"behind_bytes"`
	Caught         bool    `json:"caught_holder"`
	GrantedTwice   *int    `json:"granted_twice,omitempty"`
	ResumedSeconds float64 `json:"resumed_seconds"`
}

// newFailoverDoc is f with units.
func newFailoverDoc(f *scenario.Failover, fencedOut int64) *FailoverDoc {
	twice, promoted, resumed := f.Totals()
	d := &FailoverDoc{Planned: f.Planned, Done: len(f.Rounds), FencedOut: fencedOut,
		PromotedMaxMs: ms(promoted), ResumedMaxSeconds: resumed.Seconds(), Error: f.Err, Rounds: []FailoverRoundDoc{}}
	if resumed < 0 {
		d.ResumedMaxSeconds = -1
	}
	watched := false
	for _, r := range f.Rounds {
		rd := FailoverRoundDoc{AtSeconds: r.At.Seconds(), PromotedMs: ms(r.Promoted), HeldMs: ms(r.Held),
			BehindBytes: r.Behind, Caught: r.Caught, ResumedSeconds: r.Resumed.Seconds()}
		if r.Resumed < 0 {
			rd.ResumedSeconds = -1
		}
		if r.GrantedTwice >= 0 {
			n := r.GrantedTwice
			rd.GrantedTwice, watched = &n, true
		}
		d.Rounds = append(d.Rounds, rd)
	}
	if watched {
		d.GrantedTwice = &twice
	}
	return d
}
