// Package faultproxy owns the loopback TCP proxy that injects network
// faults between a client and a server it does not own: tests put it in
// front of real servers (internal/testenv), the load generator in front of
// the Redis nodes it restarts and of a replica's replication link
// (internal/scenario). Three faults, each undone by its pair:
//
//   - Stop cuts: every live connection is closed and new ones are refused,
//     as when the server dies; Start serves again on the same address.
//   - Hold stalls: connections stay open but no byte flows either way, as
//     when a link is partitioned without a reset; Release lets the bytes
//     held so far through, in order. HoldAt stalls the link at a place in
//     what the server sends, found by the caller.
//   - SetDelay slows every chunk by a fixed delay.
package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flashsale/flashsale/internal/porthold"
)

// Proxy is a loopback TCP proxy in front of one server: Stop makes the
// server look dead, Hold makes the link stall, SetDelay makes it slow.
//
// Its methods are safe for concurrent use. The caller must call Close when
// done.
type Proxy struct {
	upstream string
	delay    atomic.Int64                  // time.Duration added to every chunk, each way
	gate     atomic.Pointer[chan struct{}] // open (closed channel) unless held
	cut      atomic.Pointer[Cut]           // pending HoldAt, nil if none

	mu     sync.Mutex
	addr   string                // fixed at the first listen
	ln     net.Listener          // nil while stopped
	held   *porthold.Held        // the port, while stopped (see package porthold)
	gen    int                   // bumped by every Start: stale accepts are dropped
	conns  map[net.Conn]struct{} // live connections, both sides
	closed bool
	wg     sync.WaitGroup
}

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("faultproxy: proxy closed")

// New starts a proxy on a random 127.0.0.1 port that forwards every
// connection to upstream (host:port). The upstream is dialled per accepted
// connection; if it cannot be reached the client's connection is closed.
func New(upstream string) (*Proxy, error) {
	p := &Proxy{upstream: upstream, addr: "127.0.0.1:0", conns: map[net.Conn]struct{}{}}
	open := make(chan struct{})
	close(open)
	p.gate.Store(&open)
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
	p.cut.Store(nil)
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
		return ErrClosed
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
		return fmt.Errorf("faultproxy: proxy for %s: listen on %s: %w", p.upstream, p.addr, err)
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

// Hold stalls every connection, live and new, without closing any: the
// bytes either side sends are read and kept, none is forwarded, as on a
// link that is partitioned without a reset. The client and the server see
// silence, not an error, until their own timeouts. Holding a held proxy
// does nothing.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if g := *p.gate.Load(); isOpen(g) {
		held := make(chan struct{})
		p.gate.Store(&held)
	}
}

// Cut finds where a hold begins in one chunk of what the server sent: the
// index of its first byte to hold, or -1 if the chunk holds no such place.
type Cut func(chunk []byte) int

// HoldAt holds the proxy as Hold does, from a place in what the server
// sends: each chunk the server sends from now on, while the proxy is not
// held, is given to cut, and at the first chunk where cut finds a place
// the bytes before it are forwarded, then the proxy is held from that
// byte on. A chunk is what one read returned: a place that spans two
// chunks is not found. Release, Stop and another HoldAt cancel a cut not
// yet found.
func (p *Proxy) HoldAt(cut Cut) { p.cut.Store(&cut) }

// cutAt looks for the pending HoldAt's place in chunk b from the server:
// its index, or -1. Once found, the cut is no longer pending and the proxy
// is held, in one step under p.mu as Hold and Release take it: no chunk
// passes the gate in between, and a Release that cleared the cut first
// wins.
func (p *Proxy) cutAt(b []byte) int {
	c := p.cut.Load()
	if c == nil || !isOpen(*p.gate.Load()) {
		return -1
	}
	i := (*c)(b)
	if i < 0 {
		return -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut.CompareAndSwap(c, nil) || !isOpen(*p.gate.Load()) {
		return -1
	}
	held := make(chan struct{})
	p.gate.Store(&held)
	return min(i, len(b))
}

// Release lets the bytes a Hold kept through, in order, and forwards
// again; it cancels a pending HoldAt. Releasing a proxy that is not held
// does nothing more.
func (p *Proxy) Release() {
	p.cut.Store(nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	if g := *p.gate.Load(); !isOpen(g) {
		close(g)
	}
}

// Held reports whether the proxy is held.
func (p *Proxy) Held() bool { return !isOpen(*p.gate.Load()) }

func isOpen(gate chan struct{}) bool {
	select {
	case <-gate:
		return true
	default:
		return false
	}
}

// Close stops the proxy for good and waits until its goroutines are gone.
// It is safe to call more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.held.Release()
	p.held = nil
	p.mu.Unlock()
	p.Stop()
	p.Release() // a held pipe would wait for it
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
		p.pipe(up, client, done, false)
		closeBoth()
	}()
	p.pipe(client, up, done, true)
	closeBoth()
}

// pipe copies src to dst, holding each chunk while the proxy is held and
// for the current delay; fromServer says src is the server, whose chunks
// a HoldAt looks into.
func (p *Proxy) pipe(dst, src net.Conn, done <-chan struct{}, fromServer bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		b := buf[:n]
		if fromServer && n > 0 && p.cut.Load() != nil {
			if !p.opened(done) { // a cut is looked for only while not held
				return
			}
			if i := p.cutAt(b); i >= 0 {
				// Held by cutAt; the bytes before the cut go past the
				// gate, so a caller who sees them sees the proxy held.
				if !p.send(dst, b[:i], done) {
					return
				}
				b = b[i:]
			}
		}
		if len(b) > 0 && !p.forward(dst, b, done) {
			return
		}
		if err != nil {
			return
		}
	}
}

// forward writes b to dst once the proxy is not held, after the current
// delay; false if done closed first or the write failed. The gate is
// checked after the delay as well, so that a chunk whose delay was running
// when the proxy was held does not slip out while it is.
func (p *Proxy) forward(dst net.Conn, b []byte, done <-chan struct{}) bool {
	if len(b) == 0 {
		return true
	}
	return p.opened(done) && p.delayed(done) && p.opened(done) && write(dst, b)
}

// opened waits until the proxy is not held; false if done closed first.
func (p *Proxy) opened(done <-chan struct{}) bool {
	select {
	case <-*p.gate.Load():
		return true
	case <-done:
		return false
	}
}

// send writes b to dst after the current delay, held or not; false if
// done closed first or the write failed.
func (p *Proxy) send(dst net.Conn, b []byte, done <-chan struct{}) bool {
	return len(b) == 0 || p.delayed(done) && write(dst, b)
}

// delayed waits the current delay; false if done closed first.
func (p *Proxy) delayed(done <-chan struct{}) bool {
	d := time.Duration(p.delay.Load())
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}

// write writes b to dst: false if it failed.
func write(dst net.Conn, b []byte) bool {
	_, err := dst.Write(b)
	return err == nil
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
