package redisproc

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// startSet starts a Set for t, skipping t where the binaries are missing
// unless FLASHSALE_TEST_REQUIRE_SENTINEL is 1, and closes it at cleanup.
// Under go test -short it skips t unless that variable is 1, as
// testenv.NewSentinels does (this package cannot import testenv, which
// imports it).
func startSet(t *testing.T) *Set {
	t.Helper()
	if testing.Short() && os.Getenv("FLASHSALE_TEST_REQUIRE_SENTINEL") != "1" {
		t.Skip("-short: starts redis-server and redis-sentinel processes; the full run has them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := StartSet(ctx, t.TempDir())
	if errors.Is(err, ErrMissingBinaries) && os.Getenv("FLASHSALE_TEST_REQUIRE_SENTINEL") != "1" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Two failovers in a row: a write the held link kept from the replica is
// lost by the promotion, the old master rejoins empty as the replica, and
// once the set is closed every process it started has exited.
func TestSetFailsOverAndRejoins(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var procs []*Process
	t.Run("failovers", func(t *testing.T) {
		s := startSet(t)
		for round := range 2 {
			master, replica := s.Master(), s.Replica()
			s.Link().Hold()
			if err := master.Client.Set(ctx, "k", round, 0).Err(); err != nil {
				t.Fatal(err)
			}
			m, r, err := s.Offsets(ctx)
			if err != nil || m <= r {
				t.Fatalf("round %d: offsets master %d, replica %d (%v): want the replica behind", round, m, r, err)
			}
			s.KillMaster()
			start := time.Now()
			if err := s.AwaitMaster(ctx, replica.Addr); err != nil {
				t.Fatal(err)
			}
			t.Logf("round %d: promoted after %v, %d bytes behind", round, time.Since(start).Round(time.Millisecond), m-r)
			if n, _ := replica.Client.Exists(ctx, "k").Result(); round == 0 && n != 0 {
				t.Errorf("round %d: the promoted replica has k, want it lost behind the held link", round)
			}
			procs = append(procs, master)
			if err := s.Rejoin(ctx); err != nil {
				t.Fatal(err)
			}
			if got := s.Master(); got != replica {
				t.Fatalf("round %d: master %s, want the promoted %s", round, got.Addr, replica.Addr)
			}
		}
		procs = append(procs, s.Processes()...)
	})
	for _, p := range procs {
		select {
		case <-p.Exited():
		default:
			t.Errorf("%s (pid %d) still runs after its test ended", p.Name, p.Pid())
		}
	}
}
