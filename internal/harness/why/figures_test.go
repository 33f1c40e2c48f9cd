package why

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The figures' arithmetic: overwritten sales are stock + sold − initial
// stock and never below 0 (a sale that did not sell out overwrote
// nothing); stalls are the stall rate × the orders; the watchdog renews
// at a third of the TTL.
func TestFigureArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		stock, sold, initial int
		want                 float64
	}{
		{"two buyers read the same stock", 0, 105, 100, 5},
		{"exact", 0, 100, 100, 0},
		{"not sold out", 50, 50, 100, 0},
		{"units left and sold twice", 10, 95, 100, 5},
	} {
		m := Row{Strategy: strategy.Lua, Audit: tally.Audit{Stock: tc.stock, Sold: tc.sold, InitialStock: tc.initial}}
		if f, _ := overwritten(m); f.value != tc.want {
			t.Errorf("%s: overwritten %v, want %v", tc.name, f.value, tc.want)
		}
	}
	for _, tc := range []struct {
		rate    float64
		created int
		want    float64
	}{{0.08, 235, 18.8}, {0.5, 10, 5}, {1, 3, 3}} {
		m := Row{Settings: Settings{LockTTL: time.Millisecond, Stall: time.Second, StallRate: tc.rate}, Tally: tally.Answers{Created: tc.created}}
		if f, ok := stalled(m); !ok || f.value < tc.want-1e-9 || f.value > tc.want+1e-9 {
			t.Errorf("stalls at %v of %d orders: %v (%v), want %v", tc.rate, tc.created, f.value, ok, tc.want)
		}
	}
	for ttl, want := range map[time.Duration]float64{100 * time.Millisecond: 0.033, 12 * time.Second: 4, time.Second: 0.333} {
		m := Row{Settings: Settings{LockTTL: ttl, Stall: 2 * ttl, StallRate: 0.1}}
		if f, _ := renewed(m); f.value != want {
			t.Errorf("a %v lease renewed every %v s, want %v", ttl, f.value, want)
		}
	}
	// A stall no longer than the TTL, or one that never happens, outlives
	// nothing.
	for _, s := range []Settings{{LockTTL: time.Second, Stall: time.Second, StallRate: 1}, {LockTTL: time.Second, Stall: 2 * time.Second}} {
		if _, ok := stalled(Row{Settings: s}); ok {
			t.Errorf("%+v: stalls stated", s)
		}
	}
}

// A strategy with no entry in the table is named, with the audit's
// figures, rather than left without a clause.
func TestUnknownStrategy(t *testing.T) {
	m := mechanismOf("paxos")
	if m.guard != "paxos" || len(m.figures) != 4 {
		t.Errorf("mechanismOf(paxos) = %q with %d figures, want its name and the audit's four", m.guard, len(m.figures))
	}
	if line := Line(sale("paxos", 100, 0, 100)); !strings.HasPrefix(line, "paxos: sold 100 of 100") {
		t.Errorf("line %q", line)
	}
}
