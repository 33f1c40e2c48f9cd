package scenario

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// TestCPUPerOrder divides the CPU by the orders and the answers, and says
// when it cannot.
func TestCPUPerOrder(t *testing.T) {
	m := &StrategyResult{CPU: time.Second, Tally: tally.Answers{Requests: 4000, Created: 1000}}
	if d, ok := m.CPUPerOrder(); !ok || d != time.Millisecond {
		t.Errorf("CPUPerOrder = %v, %v; want 1ms, true", d, ok)
	}
	if d, ok := m.CPUPerAnswer(); !ok || d != 250*time.Microsecond {
		t.Errorf("CPUPerAnswer = %v, %v; want 250µs, true", d, ok)
	}
	for _, m := range []*StrategyResult{{CPU: -1, Tally: tally.Answers{Created: 5}}, {CPU: time.Second}} {
		if _, ok := m.CPUPerOrder(); ok {
			t.Errorf("CPUPerOrder of CPU %v over %d orders: ok", m.CPU, m.Tally.Created)
		}
	}
}
