package scenario

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The parts of a crowd are disjoint in buyers and together are the whole
// crowd, each click once; each part sends at its share of the rate.
func TestPartsMakeTheWholeCrowd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		users int
	}{{"closed crowd", 300}, {"open crowd", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Users, s.Duration = tc.users, time.Second
			whole := newCrowd(s)
			const n = 3
			owner := map[int]int{} // buyer -> part
			var union []click
			for i := 1; i <= n; i++ {
				p := Part{I: i, N: n}
				for _, k := range whole.part(p).clicks {
					if o, ok := owner[k.user]; ok && o != i {
						t.Fatalf("buyer %d is in parts %d and %d", k.user, o, i)
					}
					owner[k.user] = i
					union = append(union, k)
				}
			}
			sortByPos := func(a, b click) int {
				if c := a.user - b.user; c != 0 {
					return c
				}
				return a.nth - b.nth
			}
			got, want := slices.SortedFunc(slices.Values(union), sortByPos), slices.SortedFunc(slices.Values(whole.clicks), sortByPos)
			if !slices.Equal(got, want) {
				t.Errorf("the %d parts hold %d clicks, want the whole crowd's %d, each once", n, len(got), len(want))
			}
		})
	}
	if got, want := (Part{I: 2, N: 4}).rate(vegeta.Rate{Freq: 1000, Per: time.Second}), (vegeta.Rate{Freq: 1000, Per: 4 * time.Second}); got != want {
		t.Errorf("part 2/4 of 1000/s paces %v, want %v", got, want)
	}
}

func TestParsePart(t *testing.T) {
	for v, want := range map[string]Part{"1/1": {1, 1}, "2/3": {2, 3}} {
		if got, err := ParsePart(v); err != nil || got != want {
			t.Errorf("ParsePart(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"0/3", "4/3", "3", "a/b", "1/0"} {
		if _, err := ParsePart(v); err == nil {
			t.Errorf("ParsePart(%q): no error", v)
		}
	}
}

// Quantile is the nearest rank: the p99 of 1..200 ms is 198 ms.
func TestQuantile(t *testing.T) {
	var ls []time.Duration
	for i := 1; i <= 200; i++ {
		ls = append(ls, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.99: 198 * time.Millisecond, 0.5: 100 * time.Millisecond, 1: 200 * time.Millisecond} {
		if got := Quantile(ls, q); got != want {
			t.Errorf("Quantile(1..200ms, %v) = %v, want %v", q, got, want)
		}
	}
}

// A part other than the first, given a wrong admin token, fails at the
// fleet's first 401 with ErrAdminToken; it does not poll for a product it
// can never see until PartWait or ctx runs out.
func TestPartRefusedTokenFailsAtOnce(t *testing.T) {
	srv := newFakeShop(t, "tok")
	s := DefaultSettings()
	s.Strategies, s.Users, s.Part = []Strategy{Strategy(strategy.Lua)}, 20, Part{I: 2, N: 2}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	_, err := Run(ctx, s, fleet.ExternalFleet([]string{srv.URL}, "wrong", nil), Options{RunID: "token"})
	if !errors.Is(err, ErrAdminToken) || ctx.Err() != nil {
		t.Errorf("Run of part 2/2 with a wrong token: %v (ctx: %v), want ErrAdminToken before ctx ends", err, ctx.Err())
	}
}
