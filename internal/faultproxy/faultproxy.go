// Package faultproxy owns the loopback TCP proxy that injects network
// faults between a client and a server it does not own: tests put it in
// front of real servers (internal/harness/testenv), the load generator in front of
// the Redis nodes it restarts (internal/harness/fleet) and of a replica's
// replication link (internal/harness/redisproc, held by internal/harness/fault). Three
// faults, each undone by its pair:
//
//   - Stop cuts: every live connection is closed and new ones are refused,
//     as when the server dies; Start serves again on the same address.
//   - Hold stalls: connections stay open but no byte flows either way, as
//     when a link is partitioned without a reset; Release lets the bytes
//     held so far through, in order. HoldAt stalls the link at a place in
//     what the server sends, found by the caller; HoldOnly narrows both to
//     the connections whose client sent something (a replica's PSYNC).
//   - SetDelay slows every chunk by a fixed delay, as a longer wire does:
//     chunks in flight wait together (a delay line), so a pipelined burst
//     is not serialised.
//
// This file holds the proxy, its connections, Stop and Start; hold.go the
// faults on the bytes in flight; delay.go the delay line that obeys them.
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
// A side that half-closes (CloseWrite) is half-closed through it, after
// its last byte, and the other side may still answer.
//
// Its methods are safe for concurrent use. The caller must call Close when
// done.
type Proxy struct {
	upstream string
	delay    atomic.Int64                      // time.Duration added to every chunk, each way
	gate     atomic.Pointer[chan struct{}]     // open (closed channel) unless held
	cut      atomic.Pointer[Cut]               // pending HoldAt, nil if none
	only     atomic.Pointer[func([]byte) bool] // HoldOnly's match, nil: hold every connection

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
// both sides are done, a read or write fails, or Stop cuts them.
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

	l := &link{}
	done := make(chan struct{})
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			close(done)
			client.Close()
			up.Close()
		})
	}
	// A side that ends with EOF has said all it will say; the other may
	// still answer (a client that half-closes after its request). So its
	// EOF is passed on, once its bytes are, and the other way runs on.
	finish := func(dst net.Conn, eof bool) {
		if !eof || !closeWrite(dst) {
			closeBoth()
		}
	}
	toServer := make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(toServer)
		finish(up, p.pipe(up, client, done, false, l))
	}()
	finish(client, p.pipe(client, up, done, true, l))
	<-toServer
	closeBoth()
}

// closeWrite sends EOF to c's peer, keeping c open to read; false if c
// cannot half-close.
func closeWrite(c net.Conn) bool {
	hc, ok := c.(interface{ CloseWrite() error })
	return ok && hc.CloseWrite() == nil
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
