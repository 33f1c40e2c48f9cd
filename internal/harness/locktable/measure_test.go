package locktable_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/locktable"
)

// TestKeysPerCase: independent keys give each worker a key of its own, so
// nobody waits; one hot key puts every contender on the same key.
func TestKeysPerCase(t *testing.T) {
	for _, c := range []struct {
		c    locktable.Case
		want []int
	}{
		{locktable.Case{Workers: 4}, []int{1, 2, 3, 4}},
		{locktable.Case{Workers: 3, Hot: true}, []int{0}},
	} {
		t.Run(c.c.Name(), func(t *testing.T) {
			var mu sync.Mutex
			seen := map[int]bool{}
			locks := newChanLocks()
			acq := func(ctx context.Context, key int) (func(context.Context) error, error) {
				mu.Lock()
				seen[key] = true
				mu.Unlock()
				return locks.acquire(ctx, key)
			}
			systems := []locktable.System{{Kind: locktable.SingleRedis, Name: "single Redis", Acquire: acq}}
			if _, err := locktable.Run(context.Background(), systems, []locktable.Case{c.c}, options(), nil); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			var got []int
			for k := range seen {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("keys asked for: %v, want %v", got, c.want)
			}
		})
	}
}

// TestMaxOpsClosesTheWindow: a cell stops counting at MaxOps cycles,
// and times exactly those, round after round, however many workers race
// for the last of them.
func TestMaxOpsClosesTheWindow(t *testing.T) {
	o := options()
	o.Duration, o.MaxOps, o.Rounds = 300*time.Millisecond, 20, 2
	systems := []locktable.System{{Kind: locktable.SingleRedis, Name: "single Redis", Acquire: newChanLocks().acquire}}
	tab, err := locktable.Run(context.Background(), systems, locktable.Cases(4, nil), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	cell := tab.Cells[0][0]
	if got, want := cell.Cycles, o.MaxOps*o.Rounds; got != want {
		t.Errorf("cycles timed: %d, want %d (MaxOps per round)", got, want)
	}
	if cell.Rate() <= 0 {
		t.Errorf("rate %v, want positive", cell.Rate())
	}
}

// TestHotKeyRateIsTheHandOff: on one hot key a lock held for hold at a
// time gives at most one cycle per hold, and no cycle is shorter than
// hold: the rate is cycles per second of the window, not of anything
// else.
func TestHotKeyRateIsTheHandOff(t *testing.T) {
	const hold = 5 * time.Millisecond
	locks := newChanLocks()
	acq := func(ctx context.Context, key int) (func(context.Context) error, error) {
		release, err := locks.acquire(ctx, key)
		if err != nil {
			return nil, err
		}
		timer := time.NewTimer(hold) // the work done under the lock
		defer timer.Stop()
		<-timer.C
		return release, nil
	}
	o := options()
	o.Duration, o.Rounds = 200*time.Millisecond, 1
	systems := []locktable.System{{Kind: locktable.RowLock, Name: "row lock", Acquire: acq}}
	tab, err := locktable.Run(context.Background(), systems, locktable.Cases(1, []int{3})[1:], o, nil)
	if err != nil {
		t.Fatal(err)
	}
	cell := tab.Cells[0][0]
	if max := float64(time.Second/hold) * 1.1; cell.Rate() <= 0 || cell.Rate() > max {
		t.Errorf("rate %.0f/s, want above 0 and at most %.0f/s (one hand-off per %v)", cell.Rate(), max, hold)
	}
	if cell.P50 < hold || cell.P99 < cell.P50 {
		t.Errorf("p50 %v, p99 %v: want p50 ≥ %v ≤ p99", cell.P50, cell.P99, hold)
	}
	if n := locks.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping holders of the hot key", n)
	}
}

// TestRunRefusesWhatCannotWork: options out of range and a case with no
// workers are refused before anything runs, naming what is wrong.
func TestRunRefusesWhatCannotWork(t *testing.T) {
	calls := 0
	systems := []locktable.System{{Kind: locktable.SingleRedis, Name: "single Redis",
		Acquire: func(context.Context, int) (func(context.Context) error, error) {
			calls++
			return func(context.Context) error { return nil }, nil
		}}}
	change := func(f func(*locktable.Options)) locktable.Options { o := options(); f(&o); return o }
	for _, tc := range []struct {
		name  string
		o     locktable.Options
		cases []locktable.Case
		want  string
	}{
		{"negative warm-up", change(func(o *locktable.Options) { o.Warmup = -1 }), locktable.Cases(1, nil), "warm-up"},
		{"no duration", change(func(o *locktable.Options) { o.Duration = 0 }), locktable.Cases(1, nil), "duration"},
		{"no rounds", change(func(o *locktable.Options) { o.Rounds = 0 }), locktable.Cases(1, nil), "rounds"},
		{"no ops", change(func(o *locktable.Options) { o.MaxOps = 0 }), locktable.Cases(1, nil), "ops"},
		{"no workers", options(), locktable.Cases(0, nil), "no workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := locktable.Run(context.Background(), systems, tc.cases, tc.o, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want an error naming %s", err, tc.want)
			}
		})
	}
	if calls != 0 {
		t.Errorf("%d acquires for runs that were refused, want 0", calls)
	}
}

// TestProgressLinePerCell: the progress writer gets one line per measured
// cell and round, none for a skipped system.
func TestProgressLinePerCell(t *testing.T) {
	systems := []locktable.System{
		{Kind: locktable.SingleRedis, Name: "single Redis", Acquire: newChanLocks().acquire},
		{Kind: locktable.Etcd, Name: "etcd", Skip: "give --etcd"},
	}
	var b strings.Builder
	o := options()
	cases := locktable.Cases(2, []int{2})
	if _, err := locktable.Run(context.Background(), systems, cases, o, &b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got, want := len(lines), o.Rounds*len(cases); got != want {
		t.Errorf("%d progress lines, want %d:\n%s", got, want, b.String())
	}
	if strings.Contains(b.String(), "etcd") {
		t.Errorf("progress names the skipped system:\n%s", b.String())
	}
}
