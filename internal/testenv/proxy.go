package testenv

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/porthold"
)

// Proxy is a loopback TCP proxy in front of one server. Tests use it to
// inject network faults into servers they do not own: Stop makes the server
// look dead (every live connection is cut, new ones are refused), Start
// brings it back on the same address, SetDelay makes it slow.
//
// Its methods are safe for concurrent use. The caller must call Close when
// done; the helpers in this package do so at test cleanup.
type Proxy struct {
	upstream string
	delay    atomic.Int64 // time.Duration added to every chunk, each way

	mu     sync.Mutex
	addr   string                // fixed at the first listen
	ln     net.Listener          // nil while stopped
	held   *porthold.Held        // the port, while stopped (see package porthold)
	gen    int                   // bumped by every Start: stale accepts are dropped
	conns  map[net.Conn]struct{} // live connections, both sides
	closed bool
	wg     sync.WaitGroup
}

// errProxyClosed is returned by Start after Close.
var errProxyClosed = errors.New("testenv: proxy closed")

// NewProxy starts a proxy on a random 127.0.0.1 port that forwards every
// connection to upstream (host:port). The upstream is dialled per accepted
// connection; if it cannot be reached the client's connection is closed.
func NewProxy(upstream string) (*Proxy, error) {
	p := &Proxy{upstream: upstream, addr: "127.0.0.1:0", conns: map[net.Conn]struct{}{}}
	if err := p.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// Addr returns the proxy's address. It does not change across Stop/Start.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Stop closes the listener and every live connection, so clients get
// errors at once and reconnects are refused, as when a server dies; the
// port stays held for Start. Stopping a stopped proxy does nothing.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
		if !p.closed {
			p.held, _ = porthold.Hold(p.addr) // without it, Start may find the port taken
		}
	}
}

// Start listens again on the same address. Starting a running proxy does
// nothing. It returns an error after Close, or if the port was taken while
// the proxy was stopped (it retries for a second first). Stop holds the
// port (see package porthold), so only a listener that names the port
// itself can take it.
func (p *Proxy) Start() error {
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
	var ln net.Listener
	var err error
	for try := 0; try < 20; try++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		if p.gen > 0 { // stopped, not new: hold the port for the next try
			p.held, _ = porthold.Hold(p.addr)
		}
		return fmt.Errorf("testenv: proxy for %s: listen on %s: %w", p.upstream, p.addr, err)
	}
	p.ln = ln
	p.addr = ln.Addr().String()
	p.gen++
	p.wg.Add(1)
	go p.accept(ln, p.gen)
	return nil
}

// SetDelay makes every chunk of data wait d before it is forwarded, in each
// direction: a request/response round trip gets about 2·d slower. Zero
// removes the delay. It applies to live connections too.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Close stops the proxy for good and waits until its goroutines are gone.
// It is safe to call more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.held.Release()
	p.held = nil
	p.mu.Unlock()
	p.Stop()
	p.wg.Wait()
}

func (p *Proxy) accept(ln net.Listener, gen int) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // listener closed by Stop
		}
		p.wg.Add(1)
		go p.serve(c, gen)
	}
}

// serve connects one client to the upstream and copies both ways until
// either side closes or Stop cuts them.
func (p *Proxy) serve(client net.Conn, gen int) {
	defer p.wg.Done()
	if !p.track(client, gen) {
		client.Close()
		return
	}
	defer p.untrack(client)
	up, err := net.DialTimeout("tcp", p.upstream, 2*time.Second)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(up, gen) {
		client.Close()
		up.Close()
		return
	}
	defer p.untrack(up)

	done := make(chan struct{})
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			close(done)
			client.Close()
			up.Close()
		})
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pipe(up, client, done)
		closeBoth()
	}()
	p.pipe(client, up, done)
	closeBoth()
}

// pipe copies src to dst, holding each chunk for the current delay.
func (p *Proxy) pipe(dst, src net.Conn, done <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-done:
					t.Stop()
					return
				case <-t.C:
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// track registers c as live unless the proxy was stopped (or stopped and
// started again) since c was accepted.
func (p *Proxy) track(c net.Conn, gen int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil || p.gen != gen {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}
