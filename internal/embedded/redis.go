package embedded

import (
	"context"
	"fmt"
	"sync"

	"github.com/alicebob/miniredis/v2"

	"github.com/flashsale/flashsale/internal/porthold"
)

// Redis is a set of independent in-process Redis servers (miniredis), each
// listening on its own random 127.0.0.1 port: the embedded stand-in for the
// five Redis masters that Redlock needs. The nodes share nothing, so taking
// one down affects only the clients of that node.
//
// Its methods are safe for concurrent use. The caller must call Close when
// done, which stops every node.
type Redis struct {
	mu     sync.Mutex
	nodes  []*miniredis.Miniredis
	addrs  []string
	down   []bool           // stopped, not restarted
	held   []*porthold.Held // a stopped node's port, kept for its Restart
	closed bool
}

// StartRedis starts n independent miniredis servers on 127.0.0.1 random
// ports. It returns an error if n < 1 or a listener cannot be opened; then no
// server is left running.
//
// Every node runs with ClockTTL(true). miniredis is made for unit tests, and
// by default its TTLs only move when a test calls FastForward: a key set with
// PX 100 still has its 100 ms an hour later. A naive lock would then never
// expire, a crashed holder would block every buyer forever, and the demo
// would silently show the wrong lesson. With ClockTTL the TTLs run down on the
// wall clock, as they do on a real Redis.
func StartRedis(n int) (*Redis, error) {
	if n < 1 {
		return nil, fmt.Errorf("embedded: need at least one redis node, got %d", n)
	}
	r := &Redis{}
	for i := 0; i < n; i++ {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // keys expire on the wall clock; see the doc comment
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			r.Close()
			return nil, fmt.Errorf("embedded: start redis node %d: %w", i, err)
		}
		r.nodes = append(r.nodes, m)
		r.addrs = append(r.addrs, m.Addr())
		r.down = append(r.down, false)
		r.held = append(r.held, nil)
	}
	return r, nil
}

// Addrs returns the host:port of every node, in node order. The addresses
// stay the same across Stop and Restart. The returned slice is a copy.
func (r *Redis) Addrs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.addrs...)
}

// Len returns the number of nodes.
func (r *Redis) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.nodes)
}

// Node returns the miniredis server behind node i, for tests that want to
// inspect it (TTL, Keys) or move its clock; after Crash, it is the new
// server. It panics if i is out of range.
func (r *Redis) Node(i int) *miniredis.Miniredis {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nodes[i]
}

// Stop takes node i down: its listener and every client connection are
// closed, so clients get connection errors (refused on reconnect) at once.
// Its data is kept for Restart, and its port is held for it (see package
// porthold). Stopping a stopped node does nothing. It panics if i is out of
// range.
func (r *Redis) Stop(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.takeDown(i)
}

// Crash takes node i down as a Redis without persistence goes down when its
// process dies: like Stop, but what the server knew is gone with it (keys,
// loaded scripts, subscriptions). Restart then brings back a new, empty
// server on the same address, as a restarted process with nothing on disk
// is. Crashing a stopped node discards the data Stop kept. It panics if i
// is out of range.
func (r *Redis) Crash(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.takeDown(i)
	fresh := miniredis.NewMiniRedis()
	fresh.ClockTTL(true) // as StartRedis's nodes: see its doc comment
	r.nodes[i] = fresh
}

// takeDown closes node i and holds its port for Restart. Called with r.mu
// held.
func (r *Redis) takeDown(i int) {
	r.nodes[i].Close()
	r.down[i] = true
	if r.held[i] == nil && !r.closed {
		r.held[i], _ = porthold.Hold(r.addrs[i]) // without it, Restart may find the port taken
	}
}

// Restart brings node i back on the same address with its data (keys whose
// TTL ran out while it was down are gone, as on a real server), or empty
// after Crash. It returns an error if the node is running or the port was
// taken meanwhile. It panics if i is out of range.
func (r *Redis) Restart(i int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("embedded: redis closed")
	}
	m := r.nodes[i]
	if !r.down[i] {
		return fmt.Errorf("embedded: restart redis node %d: still running", i)
	}
	// Close cancelled the server's context (used by blocking commands such
	// as BLPOP); give the restarted server a fresh one. No goroutine of the
	// stopped server is left to read it.
	m.Ctx, m.CtxCancel = context.WithCancel(context.Background())
	r.held[i].Release()
	r.held[i] = nil
	if err := m.StartAddr(r.addrs[i]); err != nil {
		r.held[i], _ = porthold.Hold(r.addrs[i]) // for the next try
		return fmt.Errorf("embedded: restart redis node %d on %s: %w", i, r.addrs[i], err)
	}
	r.down[i] = false
	return nil
}

// Close stops every node and discards their data. It is safe to call more
// than once.
func (r *Redis) Close() {
	r.mu.Lock()
	r.closed = true
	nodes := r.nodes
	for i, h := range r.held {
		h.Release()
		r.held[i] = nil
	}
	r.mu.Unlock()
	for _, m := range nodes {
		m.Close()
	}
}
