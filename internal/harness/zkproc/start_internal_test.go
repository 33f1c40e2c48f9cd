package zkproc

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/porthold"
)

// TestStartFails: a start that fails leaves nothing running and says why,
// quoting the members' logs. On ports it picked, it tries three times
// (one may have been taken meanwhile); on ports it was given, once; not
// again once ctx has ended.
func TestStartFails(t *testing.T) {
	for _, tc := range []struct {
		name     string
		java     string // the fake java's mode
		first    func(t *testing.T, dir string) int
		timeout  time.Duration
		tries    int // Start's tries, where member 1's log tells them
		wantSaid []string
		wantErr  error
	}{
		{name: "java exits, ports picked", java: "exit",
			tries: 3, wantSaid: []string{"exit status 3", "fake java: no server here", "zk3.log"}},
		{name: "java exits, ports given", java: "exit", first: closedPort,
			tries: 1, wantSaid: []string{"exit status 3"}},
		{name: "another server on the port", java: "serve", first: foreignServer,
			wantSaid: []string{"another ZooKeeper server answers on 127.0.0.1:"}},
		{name: "ctx ends", java: "serve", timeout: 300 * time.Millisecond,
			wantErr: context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fakeJava(t, tc.java)
			cfg := Config{Dir: dir}
			if tc.first != nil {
				cfg.FirstPort = tc.first(t, dir)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			e, err := Start(ctx, cfg)
			if err == nil {
				e.Stop()
				t.Fatal("Start succeeded")
			}
			for _, s := range tc.wantSaid {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not say %q:\n%v", s, err)
				}
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want one wrapping %v", err, tc.wantErr)
			}
			// Member 1 is awaited first: each try ends once it has exited,
			// after it wrote its line.
			log, _ := os.ReadFile(filepath.Join(dir, "zk1.log"))
			if n := strings.Count(string(log), "fake java"); tc.tries > 0 && n != tc.tries {
				t.Errorf("member 1 started %d times, want %d (tries)", n, tc.tries)
			}
			pids := startedPids(t, dir)
			for _, pid := range pids {
				if !gone(pid) {
					t.Errorf("member pid %d still runs after Start failed", pid)
				}
			}
		})
	}
	t.Run("no java", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		if _, err := Start(context.Background(), Config{Dir: t.TempDir()}); !errors.Is(err, ErrMissingBinaries) {
			t.Errorf("Start without java: %v, want ErrMissingBinaries", err)
		}
	})
}

// closedPort returns a loopback port where nothing listens.
func closedPort(t *testing.T, _ string) int {
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	return free[0]
}

// foreignServer returns the port of a ZooKeeper server of someone else's,
// that serves from another data directory.
func foreignServer(t *testing.T, _ string) int {
	z := newFakeZK(t, "127.0.0.1:0", "follower", "/var/lib/zookeeper")
	return z.ln.Addr().(*net.TCPAddr).Port
}

// TestEnsembleSignals: with members that serve (stand-ins), Start writes
// each member's configuration and id and returns once all serve; Pause
// stops a member and Resume lets it run; Kill returns once it has exited;
// Restart refuses a running member, starts a killed one on the same
// files and waits until it serves; Stop ends a paused member with SIGTERM
// and may be called again. Detached members lead process groups of their
// own.
func TestEnsembleSignals(t *testing.T) {
	for _, detach := range []bool{false, true} {
		t.Run("detach="+strconv.FormatBool(detach), func(t *testing.T) {
			dir := t.TempDir()
			first, zks := fakeMembers(t, dir)
			fakeJava(t, "serve")
			ctx := context.Background()
			e, err := Start(ctx, Config{Dir: dir, FirstPort: first, Detach: detach})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Stop()
			checkFiles(t, dir, first)
			for i, s := range e.Servers() {
				if s != zks[i].addr() {
					t.Errorf("member %d serves on %s, want %s", i+1, s, zks[i].addr())
				}
			}
			pids := e.Pids()
			for _, pid := range pids {
				want := syscall.Getpgrp()
				if detach {
					want = pid
				}
				if got, err := syscall.Getpgid(pid); err != nil || got != want {
					t.Errorf("pid %d in process group %d (%v), want %d", pid, got, err, want)
				}
			}
			if i, err := Leader(ctx, e.Servers()); err != nil || i != 0 {
				t.Errorf("Leader = %d, %v; want 0", i, err)
			}

			if err := e.Pause(1); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, 5*time.Second, "member 2 stopped", func() bool { return procState(pids[1]) == 'T' })
			e.Resume(1)
			testenv.WaitFor(t, 5*time.Second, "member 2 running", func() bool { return procState(pids[1]) != 'T' })

			e.Kill(2)
			if !gone(pids[2]) {
				t.Errorf("Kill returned with member 3 (pid %d) still there", pids[2])
			}
			if err := e.Restart(ctx, 0); err == nil || !strings.Contains(err.Error(), "still runs") {
				t.Errorf("Restart of a running member: %v, want it refused", err)
			}
			zks[2].setMode("") // back, and without a quorum
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if err := e.Restart(short, 2); err == nil || !strings.Contains(err.Error(), "does not serve again") {
				t.Errorf("Restart of a member that does not serve: %v, want an error saying so", err)
			}
			zks[2].setMode("follower")
			if err := e.AwaitServing(ctx); err != nil {
				t.Errorf("AwaitServing once it serves: %v", err)
			}
			if got := e.Pids()[2]; got == pids[2] || gone(got) {
				t.Errorf("after Restart member 3 is pid %d (was %d): want a new, running one", got, pids[2])
			}

			if err := e.Pause(0); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			e.Stop()
			if took := time.Since(start); took >= stopWithin {
				t.Errorf("Stop took %v: the paused member did not end on SIGTERM", took)
			}
			for _, pid := range append(pids, e.Pids()...) {
				if !gone(pid) {
					t.Errorf("pid %d still there after Stop", pid)
				}
			}
			e.Stop() // again: nothing left to do
		})
	}
}

// checkFiles checks that member i's configuration in dir is config's for
// the ports from first, and its myid i.
func checkFiles(t *testing.T, dir string, first int) {
	t.Helper()
	ports, err := pickPorts(first)
	if err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= Members; id++ {
		m := &member{id: id, dir: dir}
		cfg, err := os.ReadFile(m.cfgPath())
		if err != nil || string(cfg) != config(id, m.dataDir(), ports) {
			t.Errorf("%s: %v\n%s\nwant config(%d)", m.cfgPath(), err, cfg, id)
		}
		myid, err := os.ReadFile(filepath.Join(m.dataDir(), "myid"))
		if err != nil || string(myid) != strconv.Itoa(id)+"\n" {
			t.Errorf("member %d's myid %q (%v), want %d", id, myid, err, id)
		}
	}
}
