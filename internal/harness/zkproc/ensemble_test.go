package zkproc_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

// EnvRequireZooKeeper, set to 1, makes a missing java or zookeeper package
// a failure here rather than a skip. .ci/run sets it.
const envRequireZooKeeper = "FLASHSALE_TEST_REQUIRE_ZOOKEEPER"

// TestEnsemble, on the real server: Start returns an ensemble whose three
// members serve, one leading; a paused member stops answering and answers
// again once resumed; with the leader killed the other two elect one of
// themselves; the killed member, restarted on its data, serves again as a
// follower; Stop ends them all.
func TestEnsemble(t *testing.T) {
	e := startEnsemble(t)
	ctx := context.Background()
	leader := awaitLeader(t, e)

	follower := (leader + 1) % zkproc.Members
	if err := e.Pause(follower); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if mode, err := zkproc.Mode(short, e.Servers()[follower]); err == nil {
		t.Errorf("a paused member answered srvr (%q)", mode)
	}
	e.Resume(follower)
	testenv.WaitFor(t, 10*time.Second, "the resumed member to serve", func() bool {
		mode, err := zkproc.Mode(ctx, e.Servers()[follower])
		return err == nil && mode == "follower"
	})

	e.Kill(leader)
	if next := awaitLeader(t, e); next == leader {
		t.Fatalf("member %d leads after it was killed", leader+1)
	}
	if err := e.Restart(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if mode, err := zkproc.Mode(ctx, e.Servers()[leader]); err != nil || mode != "follower" {
		t.Errorf("the restarted member says %q (%v), want follower", mode, err)
	}

	pids := e.Pids()
	e.Stop()
	for i, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("member %d (pid %d) after Stop: %v, want no such process", i+1, pid, err)
		}
	}
	e.Stop()
}

// startEnsemble starts an ensemble of the real server in a directory of
// the test's, stopped when the test ends. It skips t under -short, or
// without java or the package (unless FLASHSALE_TEST_REQUIRE_ZOOKEEPER=1).
func startEnsemble(t *testing.T) *zkproc.Ensemble {
	t.Helper()
	required := os.Getenv(envRequireZooKeeper) == "1"
	if !required {
		testenv.SkipShort(t, "starts three java processes; the full run has them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := zkproc.Start(ctx, zkproc.Config{Dir: t.TempDir()})
	switch {
	case errors.Is(err, zkproc.ErrMissingBinaries) && !required:
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

// awaitLeader returns the index of the member that leads, once one does.
func awaitLeader(t *testing.T, e *zkproc.Ensemble) int {
	t.Helper()
	leader := -1
	testenv.WaitFor(t, 30*time.Second, "a member to lead", func() bool {
		i, err := zkproc.Leader(context.Background(), e.Servers())
		leader = i
		return err == nil
	})
	return leader
}
