package testenv

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
)

// EnvRequireSentinel, set to 1, makes NewSentinels fail the test instead of
// skipping it where redis-server or redis-sentinel is not installed.
// .ci/run sets it, after installing them.
const EnvRequireSentinel = "FLASHSALE_TEST_REQUIRE_SENTINEL"

// SentinelMasterName is the name NewSentinels' Sentinels monitor their
// master under.
const SentinelMasterName = redisproc.MasterName

// sentinelsAgreeWithin bounds the wait at start: the Sentinels find the
// replica at once (it is in sync before they start), and each other
// through hello messages sent every two seconds.
const sentinelsAgreeWithin = 30 * time.Second

// Sentinels is one test's replicated Redis (a redisproc.Set): a master,
// one replica and three Sentinels that watch them, each a real
// redis-server or redis-sentinel process on a free loopback port, with its
// configuration and log in the test's temporary directory and nothing
// persisted. Its methods fail the test on error and must be called from
// the test's goroutine.
type Sentinels struct {
	tb              testing.TB
	set             *redisproc.Set
	master, replica string // as started
}

// NewSentinels starts a master, its replica and three Sentinels for tb,
// and returns once every Sentinel names the master, knows the replica and
// knows the two other Sentinels: from then on a failover can happen. Every
// process is stopped by its pid when tb ends.
//
// Where redis-server or redis-sentinel is not on the PATH it skips tb,
// saying which is missing, or fails tb when FLASHSALE_TEST_REQUIRE_SENTINEL
// is 1. Under go test -short it skips tb unless that variable is 1. A process that does not start, or Sentinels that have not agreed
// within 30 s, fail tb.
func NewSentinels(tb testing.TB) *Sentinels {
	tb.Helper()
	if os.Getenv(EnvRequireSentinel) != "1" {
		SkipShort(tb, "starts redis-server and redis-sentinel processes; the full run has them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), sentinelsAgreeWithin)
	defer cancel()
	set, err := redisproc.StartSet(ctx, tb.TempDir())
	switch {
	case errors.Is(err, redisproc.ErrMissingBinaries) && os.Getenv(EnvRequireSentinel) == "1":
		tb.Fatalf("testenv: %v, and %s=1 requires them", err, EnvRequireSentinel)
	case errors.Is(err, redisproc.ErrMissingBinaries):
		tb.Skipf("testenv: %v", err)
	case err != nil:
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(set.Close)
	return &Sentinels{tb: tb, set: set, master: set.Master().Addr, replica: set.Replica().Addr}
}

// Addrs returns the Sentinels' addresses.
func (s *Sentinels) Addrs() []string { return s.set.Sentinels() }

// Master returns the address of the master the Sentinels were started on.
func (s *Sentinels) Master() string { return s.master }

// Replica returns the address of the replica, the master after a failover.
func (s *Sentinels) Replica() string { return s.replica }

// Set returns the processes themselves, for tests that drive faults of
// their own (holding the replication link, a second failover).
func (s *Sentinels) Set() *redisproc.Set { return s.set }

// KillMaster kills the master (SIGKILL: no goodbye to its clients or its
// replica) and returns once it has exited. The Sentinels then promote the
// replica (AwaitMaster waits for that).
func (s *Sentinels) KillMaster() { s.set.KillMaster() }

// AwaitMaster waits until every Sentinel names addr as the master, and
// fails the test, with what they named last, if that takes more than
// within.
func (s *Sentinels) AwaitMaster(addr string, within time.Duration) {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := s.set.AwaitMaster(ctx, addr); err != nil {
		s.tb.Fatalf("testenv: %v", err)
	}
}
