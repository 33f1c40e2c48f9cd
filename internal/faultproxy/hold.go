package faultproxy

import (
	"sync/atomic"
	"time"
)

// The faults on the bytes in flight: Hold and HoldAt stall a link, Release
// lets it go, SetDelay slows it. Stop and Start, which cut the server off,
// are in faultproxy.go; the delay line that obeys them is in delay.go.

// SetDelay makes every chunk of data wait d from the moment the proxy read
// it before it is forwarded, in each direction: a request/response round
// trip gets about 2·d slower. Chunks in flight wait together, as on a
// long wire: a pipelined burst arrives d later, not d per chunk. Zero
// removes the delay. It applies to live connections too, from each
// chunk not yet on its way.
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

// HoldOnly narrows Hold and HoldAt to some connections: those whose
// client has sent a chunk in which match finds what it looks for (a
// replica's PSYNC, say). The others pass whether the proxy is held or
// not; SetDelay and Stop still reach them. Connections are matched from
// their next chunk on, so call it before the ones to hold are opened. nil
// holds every connection again.
func (p *Proxy) HoldOnly(match func(fromClient []byte) bool) {
	if match == nil {
		p.only.Store(nil)
		return
	}
	p.only.Store(&match)
}

// link is what the proxy knows of one connection: whether HoldOnly's match
// picked it.
type link struct{ picked atomic.Bool }

// sees gives a chunk the client sent to HoldOnly's match, until it picks.
func (l *link) sees(p *Proxy, b []byte) {
	if m := p.only.Load(); m != nil && !l.picked.Load() && (*m)(b) {
		l.picked.Store(true)
	}
}

// holds reports whether Hold and HoldAt apply to the connection.
func (l *link) holds(p *Proxy) bool { return p.only.Load() == nil || l.picked.Load() }

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
// its index, or -1. Once found, the cut is no longer pending, ahead (which
// lets the chunks queued before b past a hold) is called, and the proxy is
// held, in one step under p.mu as Hold and Release take it: no chunk
// passes the gate in between, and a Release that cleared the cut first
// wins.
func (p *Proxy) cutAt(b []byte, ahead func()) int {
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
	ahead()
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
