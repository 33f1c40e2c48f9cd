package scenario

import (
	"math"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// paced is n answers of one generator sent every period from start, each
// answered in 5 ms, with their Metrics.
func paced(start time.Time, n int, period time.Duration) (vegeta.Results, *vegeta.Metrics) {
	var rs vegeta.Results
	var m vegeta.Metrics
	for k := range n {
		rs = append(rs, vegeta.Result{Attack: "lua", Code: 201, Timestamp: start.Add(time.Duration(k) * period), Latency: 5 * time.Millisecond})
		m.Add(&rs[k])
	}
	m.Close()
	return rs, &m
}

// Two parts merge into the times one generator sending the whole crowd
// would have measured: the send span, the rate and the throughput come
// from each part's own clock, plus the (n-1) periods by which a part's
// last click leaves before the whole crowd's; never from one machine's
// timestamps set against the other's, which a skew inflates.
func TestMergeRowTimes(t *testing.T) {
	s := DefaultSettings()
	s.Rate = 100 // a period of 10 ms for the whole crowd
	const clicks = 200
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	_, whole := paced(t0, clicks, 10*time.Millisecond)
	for _, tc := range []struct {
		name string
		skew time.Duration
	}{{"clocks that agree", 0}, {"clocks an hour apart", time.Hour}} {
		t.Run(tc.name, func(t *testing.T) {
			row := PartsRow{Strategy: "lua"}
			for i, skew := range []time.Duration{0, tc.skew} {
				s.Part = Part{I: i + 1, N: 2}
				rs, m := paced(t0.Add(skew), clicks/2, 20*time.Millisecond)
				row.Parts = append(row.Parts, PartRow{Sent: len(rs), Results: rs, Span: SpanOf(s, &StrategyResult{Metrics: *m})})
			}
			got := mergeRow(row)
			if got.Sent != clicks || got.Tally.Requests != clicks {
				t.Fatalf("merged sent %d, answers %d; want %d", got.Sent, got.Tally.Requests, clicks)
			}
			names := map[string]int{}
			for _, r := range got.Results {
				names[r.Attack]++
			}
			if names["lua part 1/2"] != clicks/2 || names["lua part 2/2"] != clicks/2 {
				t.Errorf("merged results by attack name %v, want each part's under its own (tally.EarlySoldOut compares within one)", names)
			}
			if got.Metrics.Duration != whole.Duration || got.Elapsed() != whole.Duration+whole.Wait {
				t.Errorf("merged send span %v, elapsed %v; want one generator's %v, %v", got.Metrics.Duration, got.Elapsed(), whole.Duration, whole.Duration+whole.Wait)
			}
			if math.Abs(got.ReqPerSec()-whole.Rate) > 1e-9 || math.Abs(got.Metrics.Throughput-whole.Throughput) > 1e-9 {
				t.Errorf("merged rate %.3f/s, throughput %.3f/s; want one generator's %.3f/s, %.3f/s", got.ReqPerSec(), got.Metrics.Throughput, whole.Rate, whole.Throughput)
			}
		})
	}
}

// Apart finds two parts whose spans did not overlap, beyond MergeSlack,
// and lets parts that ran together, a little skewed, pass.
func TestApart(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	span := func(at time.Duration) Span {
		return Span{Started: t0.Add(at), Send: 2 * time.Second, Wait: 100 * time.Millisecond}
	}
	if _, _, _, ok := Apart([]Span{span(0), span(500 * time.Millisecond), span(-300 * time.Millisecond)}); ok {
		t.Errorf("Apart: spans that overlap reported apart")
	}
	later, earlier, gap, ok := Apart([]Span{span(0), span(10 * time.Second)})
	if !ok || later != 1 || earlier != 0 || gap != 10*time.Second-2100*time.Millisecond {
		t.Errorf("Apart = %d, %d, %v, %v; want part 2 began 7.9s after part 1 ended", later, earlier, gap, ok)
	}
}

// A merged queued row's drain is timed on this machine's clock, from the
// merge's audit: never from a part's last click, read by another
// machine's clock (an hour ahead here), which made it negative.
func TestMergeDrainOnOneClock(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies, s.Users = []Strategy{Strategy(strategy.RedisQueue)}, 20
	fl := fleet.ExternalFleet([]string{srv.URL}, "tok", nil)
	id := productBase("skew", s.Strategies[0], 0)
	if err := fleet.NewAPI(srv.URL, "tok").CreateProduct(t.Context(), product(id, s.Strategies[0], s)); err != nil {
		t.Fatal(err)
	}
	row := PartsRow{Strategy: s.Strategies[0]}
	for i := range 2 {
		s.Part = Part{I: i + 1, N: 2}
		rs, m := paced(time.Now().Add(time.Hour), 10, 20*time.Millisecond)
		for k := range rs {
			rs[k].Code = 409 // sold out: no order to look up
			rs[k].Body = []byte(`{"error":{"code":"sold_out","message":"sold out"}}`)
		}
		row.Parts = append(row.Parts, PartRow{Sent: len(rs), Results: rs, Span: SpanOf(s, &StrategyResult{Metrics: *m})})
	}
	s.Part = Part{}
	o, err := Merge(t.Context(), s, fl, "skew", 2, []PartsRow{row})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if d := o.Strategies[0].Drain; d == nil || d.Took < 0 || d.Took > time.Minute {
		t.Errorf("merged drain %+v: want one timed on this machine, from 0 to a minute", d)
	}
}
