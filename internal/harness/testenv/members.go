package testenv

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/sigstop"
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
	var err error
	if sig == syscall.SIGSTOP {
		err = sigstop.Pause(p.pids[i], 5*time.Second)
	} else {
		err = sigstop.Resume(p.pids[i])
	}
	if err != nil {
		p.tb.Errorf("testenv: member %d of the %s: %v", i+1, p.what, err)
		return
	}
	if p.paused == nil {
		p.paused = map[int]bool{}
	}
	p.paused[i] = sig == syscall.SIGSTOP
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
