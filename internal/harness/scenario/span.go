package scenario

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Span is when one generator's attack on a row ran, by that generator's
// own clocks. Started is its wall clock's reading at the first request:
// two machines' wall clocks agree only as far as their time sync makes
// them, so Merge compares Starts only to see whether the parts ran
// together (Apart), never to measure a duration. Send (first request
// sent to last) and Wait (last sent to last answer) are differences of
// the generator's monotonic clock, and Period is its pacer's interval
// between two requests.
type Span struct {
	Started            time.Time
	Send, Wait, Period time.Duration
}

// End is the wall clock's reading at the span's last answer.
func (sp Span) End() time.Time { return sp.Started.Add(sp.Send + sp.Wait) }

// SpanOf is the span of m, a row run under s, read while m's results
// still carry their monotonic readings (before report.Write).
func SpanOf(s Settings, m *StrategyResult) Span {
	sp := Span{Started: m.Metrics.Earliest, Send: m.Metrics.Duration, Wait: m.Metrics.Wait}
	if r := s.Part.rate(s.VegetaRate()); r.Freq > 0 {
		sp.Period = r.Per / time.Duration(r.Freq)
	}
	return sp
}

// MergeSlack is how far apart, by their wall clocks, two parts' spans may
// be and still count as overlapping (Apart): time sync keeps machines'
// clocks within it, and a part started a little late still ran with the
// others.
const MergeSlack = time.Second

// Apart reports two spans that did not overlap: later began more than
// MergeSlack after earlier's last answer, gap later, by their wall clocks.
// ok is false if every two spans overlap, within MergeSlack.
func Apart(spans []Span) (later, earlier int, gap time.Duration, ok bool) {
	for i, a := range spans {
		for j, b := range spans {
			if g := a.Started.Sub(b.End()); g > MergeSlack && g > gap {
				later, earlier, gap, ok = i, j, g, true
			}
		}
	}
	return later, earlier, gap, ok
}

// mergeTimes sets m's send and answer times, a row of n parts that ran
// together, from the parts' spans: never from two machines' timestamps
// compared, which clock skew would make negative or inflate. Each part
// sends every n-th click of the whole crowd at n times the period p, so
// its last request leaves (n-1)·p before the whole crowd's last would
// have from one generator; the longest part, that much longer, is the
// whole crowd's span. Rate and throughput follow, as Vegeta defines them.
func mergeTimes(m *vegeta.Metrics, spans []Span) {
	var send, end time.Duration
	for _, sp := range spans {
		n := time.Duration(0)
		if sp.Period > 0 {
			n = sp.Period * time.Duration(len(spans)-1) / time.Duration(len(spans)) // (n-1)·p, p being sp.Period/n
		}
		send, end = max(send, sp.Send+n), max(end, sp.Send+sp.Wait+n)
	}
	if send <= 0 {
		return // one request per part, or no span: Vegeta's own figures
	}
	m.Duration, m.Wait = send, end-send
	m.Latest, m.End = m.Earliest.Add(send), m.Earliest.Add(end)
	m.Rate = float64(m.Requests) / send.Seconds()
	m.Throughput = m.Success * float64(m.Requests) / end.Seconds()
}
