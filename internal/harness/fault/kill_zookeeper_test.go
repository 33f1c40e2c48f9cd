package fault

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

// --zookeeper-kill takes the members of the ensemble the fleet started,
// and no other fleet's: it strikes the zookeeper row only, fires halfway
// through it with the two members it was asked for, brings them back,
// and says in ZooKeeper's words that one member is no majority.
func TestZooKeeperKill(t *testing.T) {
	k := ZooKeeperKill(2)
	if _, err := k.Ready(&fleet.Fleet{EtcdMembers: &downNodes{}}); !errors.Is(err, ErrNoControl) {
		t.Errorf("Ready on a fleet that started no ensemble: %v, want ErrNoControl", err)
	}
	if !k.Strikes(strategy.ZooKeeper) || k.Strikes(strategy.Etcd) || k.Strikes(strategy.Fenced) {
		t.Error("the kill strikes another row than zookeeper")
	}
	members := &downNodes{}
	stopped := make(chan struct{})
	a := &Attack{Strategy: strategy.ZooKeeper, Fleet: &fleet.Fleet{ZooKeeperMembers: members}, Expected: 40 * time.Millisecond, Stopped: stopped}
	armed, err := k.Arm(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	for members.took() == nil { // halfway, by the kill's own clock
		runtime.Gosched()
	}
	close(stopped)
	rec, err := armed.Stop(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := rec.(*Kill)
	if got == nil || !slices.Equal(got.Nodes, []int{0, 1}) || got.Of != fleet.ZooKeeperMembers || got.At < a.Expected/2 || !members.back() {
		t.Fatalf("record %+v, members back %v; want members 1 and 2 of 3 down at %v or later, then back", got, members.back(), a.Expected/2)
	}
	if why := got.Why(Sale{}); !strings.Contains(why, "members 1,2 of 3 went down") || !strings.Contains(why, "only 1 of 3 left: no majority") {
		t.Errorf("why = %q, want the members and no majority", why)
	}
}
