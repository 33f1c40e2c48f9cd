package zklock

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// The client does not say when the ensemble last heard from its session, so
// every connection goes through a wireConn that reads the framing on the way
// past: the connect answer's session id and timeout, and each answered
// request's send time, a time the ensemble heard from the session or later.
//
// Framing: a 4-byte big-endian length, then the body. A request begins with
// its xid (4 bytes), a reply with the xid it answers; pings have xid -2 and
// are answered in order, watch events xid -1. The connect answer begins with
// the version (4), the timeout in ms (4) and the session id (8; 0: expired).

const (
	xidWatchEvent = -1
	xidPing       = -2
)

// dial is the client's dialer: it wraps each connection in a wireConn
// that tells t what the connection carries.
func (t *tracker) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return t.wrap(c), nil
}

// wrap returns c read on the way past for t, its handshake due from now.
func (t *tracker) wrap(c net.Conn) *wireConn {
	return &wireConn{Conn: c, t: t, pending: map[int32]time.Time{}, handshakeBy: time.Now().Add(t.handshake)}
}

// wireConn is one connection of the client, read on the way past; the
// client writes from one goroutine and reads from another. It also bounds
// the handshake to the session timeout divided by the number of members,
// as ZooKeeper's Java client does: the Go client would wait several session
// timeouts on a hung member before trying the next.
type wireConn struct {
	net.Conn
	t           *tracker
	handshakeBy time.Time // the connect answer must have come by then

	mu          sync.Mutex
	out, in     frames
	connectSent time.Time           // when the connect request was written
	sid         int64               // the session the connect answer named
	pending     map[int32]time.Time // requests sent and not answered, by xid
	pings       []time.Time         // pings sent and not answered, oldest first
}

// Write notes when each request is sent (just before it is).
func (c *wireConn) Write(b []byte) (int, error) {
	now := time.Now()
	c.mu.Lock()
	c.out.feed(b, func(n int, head []byte) { c.sent(n, head, now) })
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// SetReadDeadline sets the deadline the client asks for, but no later
// than the handshake's until the connect answer has come.
func (c *wireConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	shaking := c.in.count == 0
	c.mu.Unlock()
	if shaking && (t.IsZero() || t.After(c.handshakeBy)) {
		t = c.handshakeBy
	}
	return c.Conn.SetReadDeadline(t)
}

// Read tells the tracker about each answer it reads.
func (c *wireConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.in.feed(b[:n], c.received)
		c.mu.Unlock()
	}
	return n, err
}

// sent notes frame n of what the client writes.
func (c *wireConn) sent(n int, head []byte, at time.Time) {
	switch {
	case n == 0:
		c.connectSent = at
	case len(head) < 4:
	case xid(head) == xidPing:
		c.pings = append(c.pings, at)
	case xid(head) >= 0:
		c.pending[xid(head)] = at
	}
}

// received acts on frame n of what the ensemble sends.
func (c *wireConn) received(n int, head []byte) {
	if n == 0 {
		if len(head) < 16 {
			return
		}
		timeout := time.Duration(binary.BigEndian.Uint32(head[4:8])) * time.Millisecond
		c.sid = int64(binary.BigEndian.Uint64(head[8:16]))
		c.t.connected(c.sid, timeout, c.connectSent)
		return
	}
	if len(head) < 4 {
		return
	}
	switch x := xid(head); {
	case x == xidPing && len(c.pings) > 0:
		at := c.pings[0]
		c.pings = c.pings[1:]
		c.t.heard(c.sid, at)
	case x >= 0:
		if at, ok := c.pending[x]; ok {
			delete(c.pending, x)
			c.t.heard(c.sid, at)
		}
	}
}

func xid(head []byte) int32 { return int32(binary.BigEndian.Uint32(head[:4])) }

// frames splits a stream of bytes into frames, handing the first bytes of
// each body (up to 16) to a function once they have arrived, whatever
// pieces the stream comes in.
type frames struct {
	head  [20]byte // the length, then the body's first bytes
	have  int      // bytes of head filled
	need  int      // bytes of head to fill: 4, then 4 + min(size, 16)
	sized bool     // the length has been read
	size  int      // the body's length
	skip  int      // bytes of the body after head still to pass over
	count int      // frames completed so far
}

// feed reads b, calling fn with each frame completed (its number on the
// connection, from 0, and the first bytes of its body).
func (f *frames) feed(b []byte, fn func(n int, head []byte)) {
	for {
		if f.skip > 0 {
			k := min(f.skip, len(b))
			f.skip -= k
			b = b[k:]
			if f.skip > 0 {
				return
			}
		}
		if f.need == 0 {
			f.need = 4
		}
		k := copy(f.head[f.have:f.need], b)
		f.have += k
		b = b[k:]
		if f.have < f.need {
			return
		}
		if !f.sized {
			f.size = int(binary.BigEndian.Uint32(f.head[:4]))
			f.sized = true
			f.need = 4 + min(f.size, 16)
			continue
		}
		fn(f.count, f.head[4:f.need])
		f.count++
		f.skip = f.size - (f.need - 4)
		f.have, f.need, f.sized = 0, 4, false
	}
}
