package zkproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/porthold"

	"github.com/flashsale/flashsale/internal/harness/sigstop"
)

// Config says where an ensemble lives.
type Config struct {
	// Dir holds member i's (1, 2, 3) configuration Dir/zk<i>.cfg, its
	// data Dir/zk<i>/ and its log Dir/zk<i>.log. It must exist. A
	// directory on tmpfs (/dev/shm) spares the disk the syncs of every
	// write.
	Dir string
	// FirstPort, when above zero, puts member i (0, 1, 2) on client port
	// FirstPort+i, quorum port FirstPort+100+i and election port
	// FirstPort+200+i. Otherwise free loopback ports are picked, and the
	// ensemble is started again on others (three tries) if one was taken
	// meanwhile.
	FirstPort int
	// Detach starts every member in a process group of its own, so that
	// it outlives this process and a Ctrl-C to the terminal's group: for
	// a command that starts an ensemble and exits (zkensemble). Its pid is
	// then the way to stop it.
	Detach bool
}

// Ensemble is a three-member ZooKeeper ensemble of java processes. Its
// methods are safe for concurrent use; Stop may be called more than once.
type Ensemble struct {
	java, classPath string
	cfg             Config
	ports           []Ports

	mu      sync.Mutex
	members []*member // by index: member i has id i+1
}

// How long a member has to serve after it starts, and to exit after
// SIGTERM before it gets SIGKILL.
const (
	startWithin = 30 * time.Second
	stopWithin  = 5 * time.Second
)

// Start starts the three members and returns once each of them serves, as
// leader or follower, which takes a few seconds (a JVM starting, then an
// election): at most until ctx ends, or 30 s. On error nothing is left
// running, and the error quotes the end of each member's log. Without
// java or the package it returns an error wrapping ErrMissingBinaries.
func Start(ctx context.Context, cfg Config) (*Ensemble, error) {
	java, classPath, err := Binaries()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startWithin)
	defer cancel()
	for try := 1; ; try++ {
		ports, err := pickPorts(cfg.FirstPort)
		if err != nil {
			return nil, err
		}
		e := &Ensemble{java: java, classPath: classPath, cfg: cfg, ports: ports}
		if err = e.start(ctx); err == nil {
			return e, nil
		}
		e.Stop()
		if cfg.FirstPort > 0 || try == 3 || ctx.Err() != nil {
			return nil, err
		}
	}
}

// start writes the members' files, starts them and waits until they serve.
func (e *Ensemble) start(ctx context.Context) error {
	e.members = make([]*member, Members)
	for i := range Members {
		m := &member{id: i + 1, dir: e.cfg.Dir}
		if err := os.MkdirAll(m.dataDir(), 0o755); err != nil {
			return fmt.Errorf("zkproc: %w", err)
		}
		if err := os.WriteFile(filepath.Join(m.dataDir(), "myid"), []byte(strconv.Itoa(m.id)+"\n"), 0o644); err != nil {
			return fmt.Errorf("zkproc: %w", err)
		}
		if err := os.WriteFile(m.cfgPath(), []byte(config(m.id, m.dataDir(), e.ports)), 0o644); err != nil {
			return fmt.Errorf("zkproc: %w", err)
		}
		if err := m.spawn(e.java, e.classPath, e.cfg.Detach); err != nil {
			return fmt.Errorf("zkproc: member %d: %w", m.id, err)
		}
		e.members[i] = m
	}
	return e.AwaitServing(ctx)
}

// AwaitServing returns once every member that runs serves clients as
// leader or follower, or an error quoting the logs once ctx ends or a
// member has exited.
func (e *Ensemble) AwaitServing(ctx context.Context) error {
	for i, m := range e.snapshot() {
		if err := m.awaitServing(ctx, e.Servers()[i]); err != nil {
			return fmt.Errorf("zkproc: member %d (%s) does not serve: %w%s", m.id, e.Servers()[i], err, e.logTails())
		}
	}
	return nil
}

// Servers returns the members' client addresses, host:port, in member
// order.
func (e *Ensemble) Servers() []string {
	out := make([]string, len(e.ports))
	for i, p := range e.ports {
		out[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Client))
	}
	return out
}

// Pids returns the members' process ids, in member order.
func (e *Ensemble) Pids() []int {
	var out []int
	for _, m := range e.snapshot() {
		out = append(out, m.cmd.Process.Pid)
	}
	return out
}

// Kill sends SIGKILL to member i (0, 1, 2): no goodbye to its peers or
// clients, whose connections are reset. It returns once it has exited.
func (e *Ensemble) Kill(i int) { e.snapshot()[i].kill() }

// Restart starts member i again on its data, after Kill, and returns once
// it serves (with a quorum: alone, it waits for a peer), or an error once
// ctx ends.
func (e *Ensemble) Restart(ctx context.Context, i int) error {
	e.mu.Lock()
	old := e.members[i]
	select {
	case <-old.exited:
	default:
		e.mu.Unlock()
		return fmt.Errorf("zkproc: member %d still runs", old.id)
	}
	m := &member{id: old.id, dir: old.dir}
	err := m.spawn(e.java, e.classPath, e.cfg.Detach)
	if err == nil {
		e.members[i] = m
	}
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("zkproc: member %d: %w", m.id, err)
	}
	if err := m.awaitServing(ctx, e.Servers()[i]); err != nil {
		return fmt.Errorf("zkproc: member %d does not serve again: %w%s", m.id, err, e.logTails())
	}
	return nil
}

// Pause stops member i with SIGSTOP, as if it hung: its connections stay
// open and say nothing. It returns once every thread of the member has
// stopped, or an error if it has not within five seconds.
func (e *Ensemble) Pause(i int) error {
	return sigstop.Pause(e.snapshot()[i].cmd.Process.Pid, 5*time.Second)
}

// Resume lets member i run again after Pause.
func (e *Ensemble) Resume(i int) { _ = sigstop.Resume(e.snapshot()[i].cmd.Process.Pid) }

// Stop stops every member (SIGTERM, then SIGKILL after five seconds) and
// returns once they have exited. It leaves their files.
func (e *Ensemble) Stop() {
	var wg sync.WaitGroup
	for _, m := range e.snapshot() {
		if m != nil {
			wg.Go(m.stop)
		}
	}
	wg.Wait()
}

// snapshot returns the members as they are now.
func (e *Ensemble) snapshot() []*member {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*member(nil), e.members...)
}

// logTails returns the end of every member's log, for an error.
func (e *Ensemble) logTails() string {
	var s string
	for _, m := range e.snapshot() {
		if m != nil {
			s += fmt.Sprintf("\nthe end of %s:\n%s", m.logPath(), tail(m.logPath(), 1500))
		}
	}
	return s
}

// pickPorts returns the members' ports: from first on, or free ones.
func pickPorts(first int) ([]Ports, error) {
	ports := make([]Ports, Members)
	if first > 0 {
		for i := range ports {
			ports[i] = Ports{Client: first + i, Quorum: first + 100 + i, Election: first + 200 + i}
		}
		return ports, nil
	}
	free, err := porthold.Free(3 * Members)
	if err != nil {
		return nil, fmt.Errorf("zkproc: %w", err)
	}
	for i := range ports {
		ports[i] = Ports{Client: free[3*i], Quorum: free[3*i+1], Election: free[3*i+2]}
	}
	return ports, nil
}
