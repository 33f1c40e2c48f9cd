package fault

import (
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/ledger"
	"github.com/flashsale/flashsale/internal/strategy"
)

// killRow is a redlock row's kill at 1s, and its sale, whose answers after
// the kill are codes.
func killRow(after ...uint16) (*Kill, Sale) {
	t0 := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	k := &Kill{Nodes: []int{0, 1, 2}, At: time.Second}
	m := Sale{Strategy: strategy.Redlock, Audit: ledger.Audit{InitialStock: 100, Sold: 100, Consistent: true}}
	m.Results = append(m.Results, vegeta.Result{Timestamp: t0, Code: 201})
	for i, code := range after {
		r := vegeta.Result{Timestamp: t0.Add(time.Second + time.Duration(i+1)*time.Millisecond), Code: code}
		switch code {
		case 409:
			r.Body = []byte(`{"error":{"code":"sold_out"}}`)
		case 503:
			r.Body = []byte(`{"error":{"code":"unavailable"}}`)
		}
		m.Results = append(m.Results, r)
	}
	return k, m
}

func why(k *Kill, s Sale) string { return k.Why(s) }

func TestWhyKillCountsWhatCameAfter(t *testing.T) {
	soldOut := why(killRow(409, 409, 409))
	if strings.Contains(soldOut, "refused instead") || !strings.Contains(soldOut, "sold out before the kill") {
		t.Errorf("kill after the sell-out: %q, want it to say the product had sold out, not that orders were refused", soldOut)
	}
	refused := why(killRow(503, 503, 409))
	if !strings.Contains(refused, "of the 3 requests sent after it, 2 were refused (503), 0 made an order, 1 were told sold out") {
		t.Errorf("kill with 503s after: %q, want the counts", refused)
	}
	if !strings.Contains(refused, "only 2 of 5 left: no majority") {
		t.Errorf("kill of 3 of 5: %q, want no majority", refused)
	}
}
