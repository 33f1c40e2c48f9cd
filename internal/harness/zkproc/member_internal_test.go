package zkproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/porthold"
)

// TestFourLetter: the answer of a member that answers; an error from one
// that says nothing (paused), once ctx ends, and from an address where
// nothing listens.
func TestFourLetter(t *testing.T) {
	ctx := context.Background()
	z := newFakeZK(t, "127.0.0.1:0", "leader", "/data/zk1")
	got, err := FourLetter(ctx, z.addr(), "srvr")
	if err != nil || !strings.Contains(got, "Mode: leader\n") {
		t.Errorf("FourLetter(srvr) = %q, %v; want the member's answer", got, err)
	}
	if mode, err := Mode(ctx, z.addr()); err != nil || mode != "leader" {
		t.Errorf("Mode = %q, %v; want leader", mode, err)
	}
	z.setMode("")
	if mode, err := Mode(ctx, z.addr()); err != nil || mode != "" {
		t.Errorf("Mode without a quorum = %q, %v; want \"\" and no error", mode, err)
	}

	silent := newSilentZK(t)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got, err := FourLetter(short, silent.addr(), "srvr"); err == nil {
		t.Errorf("a silent member answered %q", got)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("FourLetter waited %v for a silent member, past its ctx's 100ms", took)
	}

	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", free[0])
	if _, err := Mode(ctx, closed); err == nil {
		t.Errorf("Mode of %s, where nothing listens: no error", closed)
	}
}

// TestLeader: the index of the member whose srvr says leader, past
// members that do not answer; ErrNoLeader while none leads.
func TestLeader(t *testing.T) {
	ctx := context.Background()
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("127.0.0.1:%d", free[0])
	a := newFakeZK(t, "127.0.0.1:0", "follower", "")
	b := newFakeZK(t, "127.0.0.1:0", "leader", "")
	servers := []string{a.addr(), dead, b.addr()}
	if i, err := Leader(ctx, servers); err != nil || i != 2 {
		t.Errorf("Leader = %d, %v; want 2", i, err)
	}
	b.setMode("") // lost its quorum: an election is on
	if i, err := Leader(ctx, servers); !errors.Is(err, ErrNoLeader) || i != -1 {
		t.Errorf("Leader while none leads = %d, %v; want -1, ErrNoLeader", i, err)
	}
}

// TestStopPid: a process this one did not start is stopped by pid: at
// once on SIGTERM, even paused (it gets SIGCONT first); with SIGKILL once
// it has ignored SIGTERM for stopWithin. No such process is no error.
func TestStopPid(t *testing.T) {
	t.Run("paused", func(t *testing.T) {
		t.Parallel()
		pid := child(t, false, "exec sleep 60")
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := StopPid(pid); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took >= stopWithin {
			t.Errorf("a paused process took %v to stop: SIGTERM did not reach it", took)
		}
	})
	t.Run("deaf to SIGTERM", func(t *testing.T) {
		t.Parallel()
		testenv.SkipShort(t, "waits the five seconds before SIGKILL")
		pid := child(t, true, "exec sleep 60")
		start := time.Now()
		if err := StopPid(pid); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < stopWithin || !gone(pid) {
			t.Errorf("stopped after %v (gone: %v): want SIGKILL after %v", took, gone(pid), stopWithin)
		}
	})
	t.Run("no such process", func(t *testing.T) {
		t.Parallel()
		pid := child(t, false, "exec true")
		testenv.WaitFor(t, 10*time.Second, "the child gone", func() bool { return gone(pid) })
		if err := StopPid(pid); err != nil {
			t.Errorf("StopPid of an exited process: %v", err)
		}
	})
}

// child starts sh -c script, ignoring SIGTERM if deaf (an ignored signal
// stays ignored across exec), and reaps it when it exits, as its parent
// would; it returns its pid once the shell has begun the script, and
// kills it when the test ends.
func child(t *testing.T, deaf bool, script string) int {
	t.Helper()
	if deaf {
		script = "trap '' TERM; " + script
	}
	cmd := exec.Command("/bin/sh", "-c", strings.Replace(script, "exec", "echo begun; exec", 1))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "begun\n" {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	go cmd.Wait() //nolint:errcheck // only reaps it
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd.Process.Pid
}
