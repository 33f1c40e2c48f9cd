package fault

import (
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/strategy"
)

// The restart clause states what the record holds: which nodes, when, how
// long they stayed down, and, for redlock, the second holders seen.
func TestRestartWhyStatesTheFigures(t *testing.T) {
	s := Sale{Strategy: strategy.Redlock, LockTTL: time.Second, Work: 150 * time.Millisecond}
	r := &Restart{Nodes: []int{0, 1, 2}, Restarted: true, At: 1230 * time.Millisecond, Back: 2500 * time.Millisecond,
		Delay: time.Second, GrantedWhileHeld: 2}
	for _, tc := range []struct {
		name string
		edit func(*Restart, *Sale)
		want []string
	}{
		{"redlock, two second holders", func(*Restart, *Sale) {},
			[]string{"nodes 1,2,3 of 5 restarted empty at 1.23s", "a 1s lease, 150ms of work", "served again 1.27s later",
				"still on nodes 4,5, 2 other tokens held a majority"}},
		{"none seen", func(r *Restart, _ *Sale) { r.GrantedWhileHeld = 0 }, []string{"saw no other token hold a majority"}},
		{"every node restarted", func(r *Restart, _ *Sale) { r.GrantedWhileHeld = -1 }, []string{"could not be seen"}},
		{"fenced", func(r *Restart, s *Sale) { r.Nodes, s.Strategy = []int{0}, strategy.Fenced },
			[]string{"node 1 of 5 restarted empty", "node 1 held the fenced lock"}},
		{"no holder", func(r *Restart, _ *Sale) { r.Restarted = false }, []string{"no node was restarted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, s := *r, s
			tc.edit(&r, &s)
			why := r.Why(s)
			for _, w := range tc.want {
				if !strings.Contains(why, w) {
					t.Errorf("why = %q, want %q", why, w)
				}
			}
		})
	}
}
