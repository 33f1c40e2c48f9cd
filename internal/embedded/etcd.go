package embedded

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/flashsale/flashsale/internal/porthold"
)

// Etcd is an etcd cluster of n members running inside this process, each
// on its own 127.0.0.1 ports with its data in a temporary directory: the
// embedded stand-in for the three-member cluster the etcd strategy locks
// on. Members can be stopped and restarted one by one, to take the quorum
// away and give it back.
//
// It is tuned for a demo on one machine: 10 ms heartbeats and a 100 ms
// election timeout (a lost leader is replaced in well under a second, and
// the shortest lease the cluster grants is one second), and no fsync (the
// data dies with the process anyway).
//
// Its methods are safe for concurrent use. The caller must call Close when
// done, which stops every member and removes the data.
type Etcd struct {
	mu      sync.Mutex
	dir     string
	cfgs    []*embed.Config
	members []*embed.Etcd      // nil while stopped
	held    [][]*porthold.Held // a stopped member's ports, kept for its Restart
	closed  bool
}

// etcdReady bounds how long a member may take to join the cluster.
const etcdReady = 30 * time.Second

// etcdStartTries bounds how often StartEtcd starts over after losing a port.
const etcdStartTries = 5

// StartEtcd starts an n-member cluster and returns once every member has
// joined it. It returns an error if n < 1 or a member does not start; then
// nothing is left running and nothing on disk.
//
// A member's ports are chosen before the member binds them: freePorts asks
// the kernel for free ports and closes them again, because etcd wants
// addresses, not listeners. Until the member binds, the kernel may hand the
// same port to anyone else asking for a free one: another cluster starting
// in this process, or a shop starting beside this one. Holding the ports in
// between (package porthold) is no cure: only Linux lets etcd's listener
// bind a port held that way. So a member that finds its port taken ends
// the try: StartEtcd stops what it started and begins again with fresh
// ports and a fresh directory. A try loses only to a listener that took one
// of its ports in the moment between choosing and binding; etcdStartTries
// losses in a row do not happen by chance.
func StartEtcd(n int) (*Etcd, error) {
	if n < 1 {
		return nil, fmt.Errorf("embedded: need at least one etcd member, got %d", n)
	}
	var err error
	for range etcdStartTries {
		var e *Etcd
		if e, err = startEtcd(n); !errors.Is(err, syscall.EADDRINUSE) {
			return e, err
		}
	}
	return nil, fmt.Errorf("%w (a port was taken in each of %d tries)", err, etcdStartTries)
}

// startEtcd is one try of StartEtcd, on ports that pickPorts found free.
func startEtcd(n int) (*Etcd, error) {
	dir, err := os.MkdirTemp("", "flashsale-etcd-*")
	if err != nil {
		return nil, fmt.Errorf("embedded: etcd data dir: %w", err)
	}
	e := &Etcd{dir: dir, members: make([]*embed.Etcd, n), held: make([][]*porthold.Held, n)}
	ports, err := pickPorts(2 * n)
	if err != nil {
		e.Close()
		return nil, err
	}
	var initial []string
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("etcd%d", i+1)
		cfg.Dir = filepath.Join(dir, cfg.Name)
		client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])}
		peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.TickMs, cfg.ElectionMs = 10, 100
		cfg.UnsafeNoFsync = true
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(fatalOnly()) // a stopped member logs its peers as errors
		cfg.InitialClusterToken = filepath.Base(dir)
		initial = append(initial, cfg.Name+"="+peer.String())
		e.cfgs = append(e.cfgs, cfg)
	}
	for _, cfg := range e.cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
	}
	// A member of a new cluster is ready only once a quorum has started:
	// start them all, then wait for each.
	for i := range n {
		if e.members[i], err = embed.StartEtcd(e.cfgs[i]); err != nil {
			e.Close()
			return nil, fmt.Errorf("embedded: start etcd member %d: %w", i+1, err)
		}
	}
	for i := range n {
		if err := ready(e.members[i]); err != nil {
			e.Close()
			return nil, fmt.Errorf("embedded: etcd member %d: %w", i+1, err)
		}
	}
	return e, nil
}

// ready waits for m to join its cluster.
func ready(m *embed.Etcd) error {
	select {
	case <-m.Server.ReadyNotify():
		return nil
	case err := <-m.Err():
		return err
	case <-time.After(etcdReady):
		return fmt.Errorf("not ready after %v", etcdReady)
	}
}

// pickPorts is porthold.Free; export_test.go wraps it to lose the race for
// a port on purpose.
var pickPorts = porthold.Free

// Endpoints returns every member's client URL, in member order. They stay
// the same across Stop and Restart.
func (e *Etcd) Endpoints() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.cfgs))
	for i, cfg := range e.cfgs {
		out[i] = cfg.AdvertiseClientUrls[0].String()
	}
	return out
}

// Len returns the number of members.
func (e *Etcd) Len() int { return len(e.cfgs) }

// Stop takes member i down, keeping its data for Restart, and its ports
// (see package porthold). Stopping a stopped member does nothing. It
// panics if i is out of range.
func (e *Etcd) Stop(i int) { e.stop(i, false) }

// Crash takes the given members down together as crashes would, keeping
// their data and ports as Stop does: each one's raft stops at once, with
// no leadership handed over, and only then are its clients drained, which
// takes up to etcd's request timeout (5.2 s here) while a client keeps a
// stream open. Stop drains first, the member voting all the while: members
// stopped one after the other leave a quorum for seconds. This is the
// load generator's --etcd-kill.
func (e *Etcd) Crash(members ...int) {
	var wg sync.WaitGroup
	for _, i := range members {
		wg.Go(func() { e.stop(i, true) })
	}
	wg.Wait()
}

// stop is Stop for member i, and Crash's when hard.
func (e *Etcd) stop(i int, hard bool) {
	e.mu.Lock()
	m := e.members[i]
	e.members[i] = nil
	e.mu.Unlock()
	if m == nil {
		return
	}
	if hard {
		m.Server.HardStop()
	}
	m.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.members[i] == nil && e.held[i] == nil && !e.closed {
		e.held[i] = holdPorts(e.cfgs[i]) // without it, Restart may find a port taken
	}
}

// holdPorts holds the client and peer ports of a stopped member (see
// package porthold); a port it cannot hold is left to chance.
func holdPorts(cfg *embed.Config) []*porthold.Held {
	var held []*porthold.Held
	for _, u := range append(append([]url.URL(nil), cfg.ListenClientUrls...), cfg.ListenPeerUrls...) {
		if h, err := porthold.Hold(u.Host); err == nil {
			held = append(held, h)
		}
	}
	return held
}

// release lets go of the ports held for member i. The caller holds e.mu.
func (e *Etcd) release(i int) {
	for _, h := range e.held[i] {
		h.Release()
	}
	e.held[i] = nil
}

// Restart brings member i back on its addresses with its data, and
// returns once it has rejoined the cluster, which needs a quorum of
// members running: restart the stopped members concurrently when a quorum
// is gone. It returns an error if the member is running or does not come
// back. It panics if i is out of range.
func (e *Etcd) Restart(i int) error {
	e.mu.Lock()
	switch {
	case e.closed:
		e.mu.Unlock()
		return errors.New("embedded: etcd closed")
	case e.members[i] != nil:
		e.mu.Unlock()
		return fmt.Errorf("embedded: restart etcd member %d: still running", i+1)
	}
	e.release(i)
	m, err := embed.StartEtcd(e.cfgs[i])
	if err != nil {
		e.held[i] = holdPorts(e.cfgs[i]) // for the next try
		e.mu.Unlock()
		return fmt.Errorf("embedded: restart etcd member %d: %w", i+1, err)
	}
	e.members[i] = m // running, if not ready yet: Stop and Close may stop it
	e.mu.Unlock()
	if err := ready(m); err != nil {
		e.Stop(i)
		return fmt.Errorf("embedded: restart etcd member %d: %w", i+1, err)
	}
	return nil
}

// Close stops every member and removes their data. Close the clients
// first: a member waits for its open connections. It is safe to call more
// than once.
func (e *Etcd) Close() {
	e.mu.Lock()
	e.closed = true
	members := e.members
	e.members = make([]*embed.Etcd, len(members))
	for i := range e.held {
		e.release(i)
	}
	e.mu.Unlock()
	// Stopped without the hand-over of leadership a member's Close begins
	// with: the whole cluster is going, and a leader would wait seconds
	// for a follower to take over.
	var wg sync.WaitGroup
	for _, m := range members {
		if m != nil {
			wg.Go(func() {
				m.Server.HardStop()
				m.Close()
			})
		}
	}
	wg.Wait()
	os.RemoveAll(e.dir)
}
