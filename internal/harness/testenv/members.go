package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// memberProcs are the processes of a real cluster's members, named by an
// environment variable, which a test may pause (SIGSTOP) and resume
// (SIGCONT) once it has reserved the cluster: the real etcd cluster's and
// the real ZooKeeper ensemble's. Its methods are safe for concurrent use.
type memberProcs struct {
	tb   testing.TB
	what string // "etcd cluster", "ZooKeeper ensemble"
	env  string // the variable that names the pids
	pids []int  // nil if the variable is unset

	mu       sync.Mutex
	paused   map[int]bool // members this test paused
	reserved bool         // the test reserved the cluster
	closed   bool         // the test has ended: nothing more is paused
}

// newMemberProcs parses the variable env: nil pids if it is unset; one
// process id per member, or tb fails.
func newMemberProcs(tb testing.TB, what, env string, members int) *memberProcs {
	tb.Helper()
	p := &memberProcs{tb: tb, what: what, env: env}
	raw := strings.TrimSpace(os.Getenv(env))
	if raw == "" {
		return p
	}
	for _, f := range strings.Split(raw, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 1 {
			tb.Fatalf("testenv: %s=%q: want process ids, comma-separated", env, raw)
		}
		p.pids = append(p.pids, pid)
	}
	if len(p.pids) != members {
		tb.Fatalf("testenv: %s names %d processes for %d members", env, len(p.pids), members)
	}
	return p
}

// reserve records that the test reserved the cluster.
func (p *memberProcs) reserve() {
	p.mu.Lock()
	p.reserved = true
	p.mu.Unlock()
}

// signal sends sig to member i's process, failing the test (Errorf) if
// its pid is unknown or the cluster is not reserved; after the test has
// ended it does nothing.
func (p *memberProcs) signal(i int, sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return // a straggler of an ended test: its members were resumed, and stay so
	case p.pids == nil:
		p.tb.Errorf("testenv: %s is not set: a test cannot stop a member of the real %s", p.env, p.what)
		return
	case !p.reserved:
		p.tb.Errorf("testenv: stopping a member of the real %s needs Reserve first: other test processes use it", p.what)
		return
	}
	if err := syscall.Kill(p.pids[i], sig); err != nil {
		p.tb.Errorf("testenv: signal %v to member %d of the %s (pid %d): %v", sig, i+1, p.what, p.pids[i], err)
		return
	}
	if sig == syscall.SIGSTOP && !stopped(p.pids[i], 5*time.Second) {
		p.tb.Errorf("testenv: member %d of the %s (pid %d) did not stop within 5s of SIGSTOP", i+1, p.what, p.pids[i])
	}
	if p.paused == nil {
		p.paused = map[int]bool{}
	}
	p.paused[i] = sig == syscall.SIGSTOP
}

// stopped waits until every thread of pid is stopped, as Linux's
// /proc/pid/task/*/stat says, for at most d. kill(2) returns before a
// thread running on another core has stopped: until it has, the member
// may still answer a request sent after Stop returned. Where there is no
// /proc it cannot tell, and reports true at once.
func stopped(pid int, d time.Duration) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	for deadline := time.Now().Add(d); ; {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist) && !procMounted()
		}
		all := true
		for _, t := range tasks {
			stat, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
			if err != nil {
				continue // the thread has ended
			}
			// The state follows the command's closing parenthesis.
			if j := bytes.LastIndexByte(stat, ')'); j < 0 || j+2 >= len(stat) || (stat[j+2] != 'T' && stat[j+2] != 't') {
				all = false
				break
			}
		}
		if all {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// procMounted reports whether /proc is Linux's process file system.
func procMounted() bool {
	_, err := os.Stat("/proc/self/task")
	return err == nil
}

// close resumes the members the test paused, for good.
func (p *memberProcs) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for i, paused := range p.paused {
		if paused {
			_ = syscall.Kill(p.pids[i], syscall.SIGCONT)
		}
	}
	p.paused = nil
}
