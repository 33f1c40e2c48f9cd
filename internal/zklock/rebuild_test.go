package zklock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/harness/zkproc"
	"github.com/flashsale/flashsale/internal/zklock"
)

// TestRebuiltEnsemble: the ensemble is rebuilt empty on the same ports
// (its members' data gone), so it counts its zxids, the fences, from the
// start again. The holder of the old ensemble is told its lock is lost. A
// new Locker (a restarted shop) gets a grant at once, with a larger epoch,
// so that it orders after the old ensemble's grants by (epoch, fence)
// whatever the fences say. The old Locker is let in once the new
// ensemble's zxids pass the last one it saw, in a new session whose epoch
// it reads again.
func TestRebuiltEnsemble(t *testing.T) {
	e, dir := ownEnsemble(t)
	ctx := context.Background()
	opts := zklock.Options{Root: "/flashsale-test", SessionTimeout: 2 * time.Second}
	m, err := zklock.New(ctx, e.Servers(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	old, err := m.Lock(ctx, "k", time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rebuild(t, e, dir)

	select {
	case <-old.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the old ensemble's holder was not told its lock is lost")
	}
	if cause := context.Cause(old.Context()); !errors.Is(cause, dlock.ErrNotHeld) {
		t.Errorf("the old holder's cause: %v, want ErrNotHeld", cause)
	}
	fresh, err := zklock.New(ctx, e.Servers(), opts)
	if err != nil {
		t.Fatalf("a new Locker on the rebuilt ensemble: %v", err)
	}
	defer fresh.Close()
	next := grantOnce(t, fresh)
	t.Logf("old (epoch, fence) = (%d, %#x), rebuilt (%d, %#x)", old.Epoch(), old.Fence(), next.Epoch(), next.Fence())
	if next.Epoch() <= old.Epoch() {
		t.Errorf("the rebuilt ensemble's epoch %d is not after the old one's %d: a store would refuse its holders", next.Epoch(), old.Epoch())
	}

	// The old Locker has seen zxids the new ensemble has not: writes move
	// the new one past them.
	for i := 0; ; i++ {
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := m.Ready(short)
		cancel()
		if err == nil {
			break
		}
		if i == 200 {
			t.Fatalf("the old Locker was not let in after %d grants on the rebuilt ensemble: %v", i, err)
		}
		grantOnce(t, fresh)
	}
	again := grantOnce(t, m)
	if again.Epoch() != next.Epoch() {
		t.Errorf("the old Locker's grant in its new session has epoch %d, want the rebuilt ensemble's %d", again.Epoch(), next.Epoch())
	}
}

// rebuild stops the ensemble in dir, deletes its members' data, and
// starts them again on the same ports, empty.
func rebuild(t *testing.T, e *zkproc.Ensemble, dir string) {
	t.Helper()
	e.Stop()
	for i := 1; i <= zkproc.Members; i++ {
		if err := os.RemoveAll(filepath.Join(dir, "zk"+strconv.Itoa(i), "version-2")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, zkproc.Members)
	for i := range zkproc.Members { // at once: none serves alone
		wg.Go(func() { errs <- e.Restart(ctx, i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// grantOnce takes and releases key k on m, and returns the grant.
func grantOnce(t *testing.T, m *zklock.Locker) *dlock.Lock {
	t.Helper()
	l, err := m.Lock(context.Background(), "k", time.Second, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	release(t, l)
	return l
}

// ownEnsemble starts an ensemble of the test's own, in a directory it
// returns, stopped when the test ends: for a test that breaks it. It skips
// t under -short, or without java or the zookeeper package (unless
// FLASHSALE_TEST_REQUIRE_ZOOKEEPER=1).
func ownEnsemble(t *testing.T) (*zkproc.Ensemble, string) {
	t.Helper()
	required := os.Getenv("FLASHSALE_TEST_REQUIRE_ZOOKEEPER") == "1"
	if !required {
		testenv.SkipShort(t, "starts an ensemble of its own; the full run has it")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := zkproc.Start(ctx, zkproc.Config{Dir: dir})
	switch {
	case errors.Is(err, zkproc.ErrMissingBinaries) && !required:
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e, dir
}
