package order

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/stock"
)

// TestBatchQueueSheds: a buyer who finds more buyers ahead than the
// batches serve within half the lock wait is not queued; one who finds
// nobody waiting always is, however slow the last batches were, and
// buyers who gave up are nobody. Batches
// of one taking 400 ms and a lock wait of 1 s: the second in line would
// wait two batches (800 ms) and is turned away; in batches of 10 it waits
// one (400 ms) and is queued. Past the first batch's worth, a batch under
// way for longer than the average counts as long as it has taken so far,
// and before any batch has been timed it is the only measure: with its
// lock asked for 300 ms ago, the eleventh in line in batches of ten waits
// two (600 ms) and is turned away, the tenth is queued, and so it is with
// the lock asked for 600 ms ago: it is in the batch that lock is for.
func TestBatchQueueSheds(t *testing.T) {
	busy := func(batchMax int, cycle, under time.Duration, ahead, gone int) (*Service, stock.Product) {
		s := &Service{}
		p := stock.Product{ID: "batched", BatchMax: batchMax}
		q := &batchQueue{leading: true} // a leader runs: enqueue starts none
		q.cycle.Add(cycle)
		if under > 0 {
			q.asked = time.Now().Add(-under)
		}
		for range ahead {
			q.waiting = append(q.waiting, &batchWaiter{})
		}
		for range gone { // buyers who gave up, not yet taken past
			w := &batchWaiter{}
			w.withdraw()
			q.waiting = append(q.waiting, w)
		}
		s.batches.Store(p.ID, q)
		return s, p
	}
	for _, c := range []struct {
		name     string
		batchMax int
		cycle    time.Duration
		under    time.Duration // how long the batch under way has taken
		ahead    int
		gone     int
		queued   bool
	}{
		{"second in line, batches of one", 1, 400 * time.Millisecond, 0, 1, 0, false},
		{"second in line, batches of ten", 10, 400 * time.Millisecond, 0, 1, 0, true},
		{"eleventh in line, batches of ten", 10, 400 * time.Millisecond, 0, 10, 0, false},
		{"nobody ahead, after a 10 s batch", 1, 10 * time.Second, 0, 0, 0, true},
		{"twenty ahead who gave up, batches of ten", 10, 400 * time.Millisecond, 0, 0, 20, true},
		{"second in line behind twenty who gave up", 1, 400 * time.Millisecond, 0, 1, 20, false},
		{"eleventh in line, batches of ten, one under way for 300 ms", 10, 100 * time.Millisecond, 300 * time.Millisecond, 10, 0, false},
		{"tenth in line, batches of ten, one under way for 600 ms", 10, 100 * time.Millisecond, 600 * time.Millisecond, 9, 0, true},
		{"tenth in line, none timed, one under way for 300 ms", 10, 0, 300 * time.Millisecond, 9, 0, true},
		{"eleventh in line, none timed, one under way for 300 ms", 10, 0, 300 * time.Millisecond, 10, 0, false},
		{"nobody ahead, one under way for 10 s", 10, 0, 10 * time.Second, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, p := busy(c.batchMax, c.cycle, c.under, c.ahead, c.gone)
			if got := s.enqueue(p, nil, &batchWaiter{}, time.Second); got != c.queued {
				t.Fatalf("queued = %v, want %v", got, c.queued)
			}
		})
	}
}
