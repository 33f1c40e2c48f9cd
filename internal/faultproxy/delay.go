package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// The delay line: each direction of a connection is a reader that stamps
// every chunk with the time it was read and queues a copy, and a writer
// that forwards each chunk at its stamp plus the delay, once the gate is
// open. A chunk waits its own delay, never the delays of the chunks ahead
// of it: a burst of pipelined requests arrives one delay later, not one
// delay per request (a sleep in the copy loop gets this wrong).
// toxiproxy's latency toxic is the model.

// laneDepth bounds the chunks queued in one direction: when the writer is
// held or its peer reads slowly, the reader stops reading and the sender
// feels TCP's back-pressure, as it would on a real link.
const laneDepth = 64

// chunk is what one read returned, on its way through the line.
type chunk struct {
	b     []byte
	at    time.Time // when it was read; it leaves at at+delay
	seq   uint64    // its place in the lane, from 1
	holds bool      // Hold and HoldAt apply to it
}

// lane is one direction of one connection.
type lane struct {
	q chan chunk
	// pass lets the chunks up to it past a hold: those read before the
	// chunk in which a HoldAt found its cut.
	pass atomic.Uint64
	// eof says the source ended with EOF; set before q is closed.
	eof bool
}

// pipe copies src to dst through a delay line, holding each chunk while
// the proxy is held (if the hold applies to l); fromServer says src is
// the server, whose chunks a HoldAt looks into, else the client, whose
// chunks HoldOnly's match does. It returns when src has ended and every
// chunk read was written, or when done closes or a write fails: true only
// if src ended with EOF and dst has every byte.
func (p *Proxy) pipe(dst, src net.Conn, done <-chan struct{}, fromServer bool, l *link) bool {
	ln := &lane{q: make(chan chunk, laneDepth)}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(ln.q)
		ln.eof = errors.Is(p.read(src, ln, done, fromServer, l), io.EOF)
	}()
	return p.write(dst, ln, done)
}

// read stamps and queues what src sends until it ends, returning the
// read's error (io.EOF for a clean end), or done closes, returning nil. A
// cut is found here, at read time: the bytes before it are queued to pass
// the hold the cut starts, and so are the chunks queued before them.
func (p *Proxy) read(src net.Conn, ln *lane, done <-chan struct{}, fromServer bool, l *link) error {
	buf := make([]byte, 32<<10)
	var seq uint64
	put := func(b []byte, at time.Time, holds bool) bool {
		if len(b) == 0 {
			return true
		}
		seq++
		select {
		case ln.q <- chunk{b: bytes.Clone(b), at: at, seq: seq, holds: holds}:
			return true
		case <-done:
			return false
		}
	}
	for {
		n, err := src.Read(buf)
		at := time.Now()
		b := buf[:n]
		if !fromServer && n > 0 {
			l.sees(p, b)
		}
		holds := l.holds(p)
		if holds && fromServer && n > 0 && p.cut.Load() != nil {
			if !p.opened(ln, 0, done) { // a cut is looked for only while not held
				return nil
			}
			if i := p.cutAt(b, func() { ln.pass.Store(seq) }); i >= 0 {
				if !put(b[:i], at, false) {
					return nil
				}
				b = b[i:]
			}
		}
		if !put(b, at, holds) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// write forwards the lane's chunks, each at its stamp plus the current
// delay, until the lane is closed and empty, done closes or a write fails;
// true only in the first case with the source ended by EOF.
// The gate is checked after the delay as well, so that a chunk whose delay
// was running when the proxy was held does not slip out while it is.
func (p *Proxy) write(dst net.Conn, ln *lane, done <-chan struct{}) bool {
	for {
		var c chunk
		var ok bool
		select {
		case c, ok = <-ln.q:
		case <-done:
			return false
		}
		if !ok { // src ended and every chunk was written
			return ln.eof
		}
		if c.holds && !p.opened(ln, c.seq, done) {
			return false
		}
		if !sleepUntil(c.at.Add(time.Duration(p.delay.Load())), done) {
			return false
		}
		if c.holds && !p.opened(ln, c.seq, done) {
			return false
		}
		if _, err := dst.Write(c.b); err != nil {
			return false
		}
	}
}

// opened waits until the proxy is not held, or the chunk numbered seq is
// let past the hold (seq 0 never is); false if done closed first. The gate
// is read before pass: cutAt stores pass before it holds, so a writer that
// sees the new hold also sees what it lets through.
func (p *Proxy) opened(ln *lane, seq uint64, done <-chan struct{}) bool {
	for {
		g := *p.gate.Load()
		if isOpen(g) || seq != 0 && seq <= ln.pass.Load() {
			return true
		}
		select {
		case <-g:
		case <-done:
			return false
		}
	}
}
