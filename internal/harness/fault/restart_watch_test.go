package fault

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// A grant is a new token on a majority: three of five nodes make one, two
// do not; a node that does not answer holds nothing; a second holder is
// counted once however many passes see it.
func TestLockWatchGrants(t *testing.T) {
	w := watchNodes(t)
	watch := newLockWatch(w.r.DirectAddrs(), strategy.Redlock, w.key)
	defer watch.close()
	w.r.Embedded().Stop(4)
	if tokens := watch.pass(t.Context()); len(tokens) != 5 || tokens[4] != "" {
		t.Errorf("a pass with node 5 down: %q, want five readings, node 5's empty", tokens)
	}
	if err := w.r.Embedded().Restart(4); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	granted := make(chan string, 1)
	go func() {
		tok, _ := watch.awaitGrant(t.Context(), stopped)
		granted <- tok
	}()
	w.passes(4)
	w.hold(t, "minority", 0, 1)
	w.passes(4)
	w.hold(t, "majority", 2, 3, 4)
	if tok := <-granted; tok != "majority" {
		t.Errorf("awaitGrant = %q, want the token on three of five nodes", tok)
	}
	w.hold(t, "A", 3, 4)
	w.hold(t, "B", 0, 1, 2)
	counted := make(chan int, 1)
	go func() { counted <- watch.grantedWhileHeld(t.Context(), "A", []int{0, 1, 2}, stopped) }()
	w.passes(4)
	w.passes(4) // B seen by two passes at least
	for _, c := range w.clients[3:] {
		c.Del(t.Context(), w.key)
	}
	if n := <-counted; n != 1 {
		t.Errorf("grantedWhileHeld = %d, want B once", n)
	}
	close(stopped)
	if _, ok := watch.awaitGrant(t.Context(), stopped); ok {
		t.Error("awaitGrant after the attack stopped: a grant")
	}
}

// A restart whose nodes do not come back says so in its record, and is
// no error: the attack's audit tells what happened.
func TestEmptyRestartRecordsAFailedRestart(t *testing.T) {
	w := watchNodes(t)
	rs := &failedRestart{err: errors.New("node 1 not back")}
	stopped := make(chan struct{})
	armed, _ := (&EmptyRestart{Nodes: 1}).Arm(t.Context(), &Attack{Strategy: strategy.Fenced, Product: w.product, Stopped: stopped,
		Fleet: &fleet.Fleet{Restarts: rs, RedisAddrs: w.r.DirectAddrs()}})
	w.passes(0)
	w.hold(t, "A", 0)
	rec, err := armed.Stop(t.Context(), nil)
	close(stopped)
	if r, _ := rec.(*Restart); err != nil || r == nil || !r.Restarted || r.Err != "node 1 not back" || r.GrantedWhileHeld != -1 {
		t.Errorf("Stop = %+v, %v; want the restart recorded with its error, second holders unseen on fenced's one node", rec, err)
	}
}

// failedRestart is a NodeRestarter whose restart fails.
type failedRestart struct{ err error }

func (f *failedRestart) Restart(context.Context, []int, time.Duration, string) error { return f.err }
func (f *failedRestart) Describe() string                                            { return "" }
