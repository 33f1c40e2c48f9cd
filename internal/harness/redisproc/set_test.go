package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
			if _, _, err := s.Offsets(ctx); err == nil || !strings.Contains(err.Error(), "redisproc: master") {
				t.Errorf("round %d: offsets of a dead master: %v, want its error", round, err)
			}
			start := time.Now()
			if err := s.AwaitMaster(ctx, replica.Addr); err != nil {
				t.Fatal(err)
			}
			t.Logf("round %d: promoted after %v, %d bytes behind", round, time.Since(start).Round(time.Millisecond), m-r)
			if n, _ := replica.Client.Exists(ctx, "k").Result(); round == 0 && n != 0 {
				t.Errorf("round %d: the promoted replica has k, want it lost behind the held link", round)
			}
			procs = append(procs, master)
			if err := replica.Client.Set(ctx, "after", round, 0).Err(); err != nil {
				t.Fatal(err)
			}
			oldLink := s.Link()
			if err := s.Rejoin(ctx); err != nil {
				t.Fatal(err)
			}
			if got := s.Master(); got != replica {
				t.Fatalf("round %d: master %s, want the promoted %s", round, got.Addr, replica.Addr)
			}
			// The old master is back on its port as the replica, through
			// a new link, with the new master's writes and not its own
			// lost one.
			back := s.Replica()
			if s.Link() == oldLink {
				t.Errorf("round %d: the link in front of the dead master is still the set's", round)
			}
			if back.Addr != master.Addr || back == master || !s.FollowsLink(ctx) {
				t.Errorf("round %d: replica %s (was master %s), follows the link %v", round, back.Addr, master.Addr, s.FollowsLink(ctx))
			}
			if v, _ := back.Client.Get(ctx, "after").Int(); v != round {
				t.Errorf("round %d: the rejoined replica has after=%d, want the new master's %d", round, v, round)
			}
			if n, _ := back.Client.Exists(ctx, "k").Result(); round == 0 && n != 0 {
				t.Errorf("round %d: the rejoined replica kept the write the promotion lost", round)
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

// A set as AwaitReady leaves it: three Sentinels naming the master, the
// replica following the link and in sync. The faults' tools read it: the
// offsets show a held link, FollowsLink a replica pointed past it (which
// AwaitReady points back), and AwaitMaster gives up with what the
// Sentinels named. When the Sentinels promote the replica on their own
// (here a master that stopped answering them for longer than downAfter),
// AwaitReady follows them.
func TestSetReadiness(t *testing.T) {
	s := startSet(t)
	ctx := t.Context()
	master, replica := s.Master(), s.Replica()
	if len(s.Sentinels()) != 3 || len(s.Processes()) != 5 {
		t.Fatalf("%d Sentinels, %d processes; want 3 and 5", len(s.Sentinels()), len(s.Processes()))
	}
	for i, n := range s.Named(ctx) {
		if n != master.Addr {
			t.Errorf("sentinel%d names %s, want %s", i+1, n, master.Addr)
		}
	}
	for i, c := range s.clients {
		peers, err := c.Sentinels(ctx, MasterName).Result()
		replicas, err2 := c.Replicas(ctx, MasterName).Result()
		if err != nil || err2 != nil || len(peers) != 2 || len(replicas) != 1 || replicas[0]["ip"]+":"+replicas[0]["port"] != replica.Addr {
			t.Errorf("sentinel%d knows %d peers and replicas %v (%v, %v); want the two others and the replica", i+1, len(peers), replicas, err, err2)
		}
	}
	// The Sentinels judge a master down after downAfter and wait
	// failoverTimeout between failovers, as their files say.
	for i := range s.clients {
		conf, err := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("sentinel%d.conf", i+1)))
		for _, line := range []string{"sentinel down-after-milliseconds flashsale 1300", "sentinel failover-timeout flashsale 2000", "sentinel monitor flashsale"} {
			if err != nil || !strings.Contains(string(conf), line) {
				t.Errorf("sentinel%d.conf has no %q (%v)", i+1, line, err)
			}
		}
	}
	// Each server keeps an append-only file of its own, fsynced once a
	// second, and no snapshots: what a queue of accepted orders needs.
	for _, p := range []*Process{master, replica} {
		cfg, err := p.Client.ConfigGet(ctx, "*").Result()
		if err != nil || cfg["appendonly"] != "yes" || cfg["appendfsync"] != "everysec" || cfg["save"] != "" || cfg["appenddirname"] != "aof-"+strconv.Itoa(p.Port()) {
			t.Errorf("%s: appendonly %q, appendfsync %q, save %q, appenddirname %q (%v)", p.Name, cfg["appendonly"], cfg["appendfsync"], cfg["save"], cfg["appenddirname"], err)
		}
	}
	t.Run("a held link", func(t *testing.T) {
		if !s.FollowsLink(ctx) {
			t.Fatal("the replica does not follow the link")
		}
		s.Link().Hold()
		if err := master.Client.Set(ctx, "held", "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		m, r, err := s.Offsets(ctx)
		s.Link().Release()
		if err != nil || m <= r {
			t.Errorf("offsets while held: master %d, replica %d, %v; want the replica behind", m, r, err)
		}
		if err := s.AwaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		if v, _ := replica.Client.Get(ctx, "held").Result(); v != "x" {
			t.Errorf("the replica after the release: %q, want the held write", v)
		}
	})
	t.Run("a replica pointed past the link", func(t *testing.T) {
		h, p := splitAddr(master.Addr)
		if err := replica.Client.Do(ctx, "REPLICAOF", h, p).Err(); err != nil {
			t.Fatal(err)
		}
		if s.FollowsLink(ctx) {
			t.Fatal("FollowsLink after REPLICAOF the master itself")
		}
		if err := s.AwaitReady(ctx); err != nil || !s.FollowsLink(ctx) {
			t.Errorf("AwaitReady = %v, follows the link %v; want it pointed back", err, s.FollowsLink(ctx))
		}
	})
	t.Run("AwaitMaster gives up", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		err := s.AwaitMaster(short, replica.Addr)
		if err == nil || !strings.Contains(err.Error(), master.Addr) {
			t.Errorf("AwaitMaster(replica) with the master alive: %v, want it to say what they named", err)
		}
	})
	t.Run("the Sentinels promote on their own", func(t *testing.T) {
		pause := 3 * downAfter
		if err := master.Client.Do(ctx, "CLIENT", "PAUSE", pause.Milliseconds(), "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := s.AwaitMaster(wait, replica.Addr); err != nil {
			t.Fatal(err)
		}
		if err := s.AwaitReady(wait); err != nil {
			t.Fatal(err)
		}
		if s.Master() != replica || s.Replica() != master || !s.FollowsLink(ctx) {
			t.Errorf("after the Sentinels' failover: master %s, replica %s, follows the link %v; want them swapped, the link in front of the new master",
				s.Master().Addr, s.Replica().Addr, s.FollowsLink(ctx))
		}
	})
	t.Run("what is missing is said", func(t *testing.T) {
		s.Replica().Kill()
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := s.AwaitReady(short); err == nil || !strings.Contains(err.Error(), "the replica to follow the link proxy, in sync") {
			t.Errorf("AwaitReady with the replica dead: %v, want it to say the replica is missing", err)
		}
		s.sentinels[2].Kill()
		if named := s.Named(ctx); len(named) != 3 || !strings.HasPrefix(named[2], "(") || named[0] != s.Master().Addr {
			t.Errorf("Named with sentinel3 dead = %v, want its error in its place", named)
		}
		s.Close()
		s.Close() // twice is fine
		for _, p := range s.Processes() {
			select {
			case <-p.Exited():
			default:
				t.Errorf("%s still runs after Close", p.Name)
			}
		}
		if c, err := net.DialTimeout("tcp", s.Link().Addr(), time.Second); err == nil {
			c.Close()
			t.Error("the link proxy accepts connections after Close")
		}
	})
}

// The pace the faults keep rests on the Sentinels' own: a master counts
// as down after more than a second (set.go says why not less), and two
// kills are KillEvery apart, twice the failover timeout.
func TestSentinelTimings(t *testing.T) {
	if downAfter <= time.Second || KillEvery != 2*failoverTimeout || sentinelQuorum != sentinelCount/2+1 {
		t.Errorf("downAfter %v, KillEvery %v, failoverTimeout %v, quorum %d of %d", downAfter, KillEvery, failoverTimeout, sentinelQuorum, sentinelCount)
	}
}
