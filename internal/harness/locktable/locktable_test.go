package locktable_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/locktable"
)

// chanLocks is an in-process lock per key, a channel with room for one
// holder, which a waiter leaves when its context ends. It counts overlaps:
// two holders of one key at once.
type chanLocks struct {
	mu       sync.Mutex
	keys     map[int]chan struct{}
	overlaps atomic.Int64
	holding  sync.Map // key → *atomic.Bool
}

func newChanLocks() *chanLocks { return &chanLocks{keys: map[int]chan struct{}{}} }

func (l *chanLocks) acquire(ctx context.Context, key int) (func(context.Context) error, error) {
	l.mu.Lock()
	ch, ok := l.keys[key]
	if !ok {
		ch = make(chan struct{}, 1)
		l.keys[key] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	held, _ := l.holding.LoadOrStore(key, new(atomic.Bool))
	if !held.(*atomic.Bool).CompareAndSwap(false, true) {
		l.overlaps.Add(1)
	}
	return func(context.Context) error {
		held.(*atomic.Bool).Store(false)
		<-ch
		return nil
	}, nil
}

func options() locktable.Options {
	return locktable.Options{Warmup: 10 * time.Millisecond, Duration: 50 * time.Millisecond, Rounds: 2, MaxOps: 1_000_000, Pause: time.Millisecond}
}

func TestRunMeasuresEveryMeasuredSystemInEveryCase(t *testing.T) {
	locks := newChanLocks()
	systems := []locktable.System{
		{Kind: locktable.SingleRedis, Name: "single Redis", Acquire: locks.acquire},
		{Kind: locktable.ZooKeeper, Name: "ZooKeeper", Skip: "give --zookeeper"},
		{Kind: locktable.RowLock, Name: "row lock", Acquire: newChanLocks().acquire},
	}
	cases := locktable.Cases(4, []int{1, 3})
	tab, err := locktable.Run(context.Background(), systems, cases, options(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range systems {
		for j, c := range cases {
			cell := tab.Cells[i][j]
			if s.Acquire == nil {
				if cell.Cycles != 0 || len(cell.Rates) != 0 {
					t.Errorf("%s, %s: skipped, yet measured %+v", s.Name, c.Name(), cell)
				}
				continue
			}
			if got, want := len(cell.Rates), 2; got != want {
				t.Errorf("%s, %s: %d rates, want %d (one per round)", s.Name, c.Name(), got, want)
			}
			if cell.Rate() <= 0 || cell.Cycles == 0 || cell.P50 <= 0 || cell.P99 < cell.P50 || cell.Errors != 0 {
				t.Errorf("%s, %s: rate %v, %d cycles, p50 %v, p99 %v, %d errors: want a positive rate and p50 ≤ p99, no errors",
					s.Name, c.Name(), cell.Rate(), cell.Cycles, cell.P50, cell.P99, cell.Errors)
			}
		}
	}
	if n := locks.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping holders of one key", n)
	}
	var b strings.Builder
	tab.Markdown(&b)
	for _, want := range []string{"100,000", "< 1 ms", "skipped: give --zookeeper", "one hot key, 3 contenders",
		"Ratios to single Redis", "claimed: single Redis > Redlock > etcd > ZooKeeper > row lock"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, b.String())
		}
	}
}

func TestFailuresAreCountedNotTimed(t *testing.T) {
	refused := errors.New("refused")
	systems := []locktable.System{{Kind: locktable.Etcd, Name: "etcd", Acquire: func(context.Context, int) (func(context.Context) error, error) {
		return nil, refused
	}}}
	tab, err := locktable.Run(context.Background(), systems, locktable.Cases(2, nil), options(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cell := tab.Cells[0][0]
	if cell.Errors == 0 || cell.Cycles != 0 || cell.Rate() != 0 || cell.FirstErr != refused.Error() {
		t.Errorf("got %d errors (first %q), %d cycles, rate %v; want errors counted, first %q, nothing timed",
			cell.Errors, cell.FirstErr, cell.Cycles, cell.Rate(), refused)
	}
	var b strings.Builder
	tab.Markdown(&b)
	if !strings.Contains(b.String(), "the first: refused") {
		t.Errorf("the table does not name the first error:\n%s", b.String())
	}
}

func TestRunStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	systems := []locktable.System{{Kind: locktable.SingleRedis, Name: "single Redis", Acquire: newChanLocks().acquire}}
	if _, err := locktable.Run(ctx, systems, locktable.Cases(2, nil), options(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want an error wrapping context.Canceled", err)
	}
}

func TestTheOrderNamesWhatGoesAgainstTheClaim(t *testing.T) {
	acq := newChanLocks().acquire
	tab := &locktable.Table{
		Systems: []locktable.System{
			{Kind: locktable.SingleRedis, Name: "single Redis", Acquire: acq},
			{Kind: locktable.Redlock, Name: "Redlock", Acquire: acq},
			{Kind: locktable.Etcd, Name: "etcd", Acquire: acq},
			{Kind: locktable.ZooKeeper, Name: "ZooKeeper", Acquire: acq},
			{Kind: locktable.RowLock, Name: "row lock", Acquire: acq},
		},
		Cases: locktable.Cases(64, nil),
		Cells: [][]locktable.Cell{
			{{Rates: []float64{20000}}}, {{Rates: []float64{4000}}}, {{Rates: []float64{1000}}},
			{{Rates: []float64{3000}}}, {{Rates: []float64{5000}}},
		},
	}
	got := tab.Inversions(0)
	want := [][2]string{{"row lock", "Redlock"}, {"row lock", "ZooKeeper"}, {"row lock", "etcd"}, {"ZooKeeper", "etcd"}}
	if len(got) != len(want) {
		t.Fatalf("inversions %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("inversion %d: %v, want %v", i, got[i], want[i])
		}
	}
	var b strings.Builder
	tab.Markdown(&b)
	for _, want := range []string{
		"measured, independent keys, 64 workers: single Redis > row lock > Redlock > ZooKeeper > etcd",
		"| Redlock | 10× | 5.0× |", "| ZooKeeper | 100× | 6.7× |", "| row lock | none | 4.0× |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, b.String())
		}
	}
}
