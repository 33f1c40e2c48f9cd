package zkproc_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/testenv"
	"github.com/flashsale/flashsale/internal/zkproc"
)

// EnvRequireZooKeeper, set to 1, makes a missing java or zookeeper package
// a failure here rather than a skip. .ci/run sets it.
const envRequireZooKeeper = "FLASHSALE_TEST_REQUIRE_ZOOKEEPER"

// TestEnsemble: Start returns an ensemble whose three members serve, one
// leading; with the leader killed the other two elect one of themselves;
// the killed member, restarted on its data, serves again; Stop ends them.
func TestEnsemble(t *testing.T) {
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
	defer e.Stop()

	leader := awaitLeader(ctx, t, e, -1)
	e.Kill(leader)
	next := awaitLeader(ctx, t, e, leader)
	if next == leader {
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
		if err := zkproc.StopPid(pid); err != nil {
			t.Errorf("member %d (pid %d) after Stop: %v", i+1, pid, err)
		}
	}
}

// awaitLeader returns the index of the member that leads, among those but
// skip, once one does.
func awaitLeader(ctx context.Context, t *testing.T, e *zkproc.Ensemble, skip int) int {
	t.Helper()
	for {
		for i, s := range e.Servers() {
			if i == skip {
				continue
			}
			if mode, err := zkproc.Mode(ctx, s); err == nil && mode == "leader" {
				return i
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no member leads: %v", ctx.Err())
		case <-time.After(50 * time.Millisecond): // an election takes a moment
		}
	}
}
