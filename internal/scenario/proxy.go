package scenario

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/porthold"
)

// nodeProxy is a loopback TCP proxy in front of one real Redis node, which
// StartFleet puts there for --redis-restart: the fleet's shops dial the
// proxy, so that the load generator can drop their connections to a node
// it does not own, and keep them off it, without touching anyone else's
// (proxiedNodes). (internal/testenv has a proxy of its own for tests, with
// delays; this one only cuts.) Its methods are safe for concurrent use.
type nodeProxy struct {
	upstream string

	mu     sync.Mutex
	addr   string
	ln     net.Listener // nil while cut
	held   *porthold.Held
	conns  map[net.Conn]struct{} // live connections, both sides
	closed bool
	wg     sync.WaitGroup
}

// errProxyClosed is returned by serve after close.
var errProxyClosed = errors.New("scenario: proxy closed")

// newNodeProxy starts a proxy on a free 127.0.0.1 port that forwards every
// connection to upstream, dialled per connection; a client whose upstream
// cannot be reached is disconnected.
func newNodeProxy(upstream string) (*nodeProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scenario: proxy for redis node %s: %w", upstream, err)
	}
	p := &nodeProxy{upstream: upstream, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.listen(ln)
	return p, nil
}

// Addr is the proxy's address; it stays the same across cut and serve.
func (p *nodeProxy) Addr() string { return p.addr }

// cut closes the listener and every connection, as a dead server's port
// does: clients get errors at once and reconnects are refused. The port is
// held for serve (package porthold). Cutting a cut proxy does nothing.
func (p *nodeProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
		if !p.closed {
			p.held, _ = porthold.Hold(p.addr)
		}
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// serve listens on the proxy's address again. It returns an error after
// close, or if the port was taken meanwhile (after retrying for a second).
func (p *nodeProxy) serve() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errProxyClosed
	}
	if p.ln != nil {
		return nil
	}
	p.held.Release()
	p.held = nil
	var err error
	for try := 0; try < 20; try++ {
		var ln net.Listener
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.listen(ln)
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.held, _ = porthold.Hold(p.addr)
	return fmt.Errorf("scenario: proxy for redis node %s: listen on %s again: %w", p.upstream, p.addr, err)
}

// close stops the proxy for good and waits for its goroutines.
func (p *nodeProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.held.Release()
	p.held = nil
	p.mu.Unlock()
	p.cut()
	p.wg.Wait()
}

// listen accepts on ln until it is closed. Called with p.mu held, or before
// p is shared.
func (p *nodeProxy) listen(ln net.Listener) {
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by cut
			}
			p.wg.Add(1)
			go p.pipe(ln, c)
		}
	}()
}

// pipe connects one client, accepted on ln, to the upstream and copies
// both ways until either side closes or cut closes both.
func (p *nodeProxy) pipe(ln net.Listener, client net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.upstream, 2*time.Second)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(ln, client, up) {
		client.Close()
		up.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(up, client)
		client.Close() // the other copy ends too
		up.Close()
	}()
	io.Copy(client, up)
	client.Close()
	up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, up)
	p.mu.Unlock()
}

// track registers a client's connections unless ln, which accepted it, was
// closed since.
func (p *nodeProxy) track(ln net.Listener, cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != ln {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}
