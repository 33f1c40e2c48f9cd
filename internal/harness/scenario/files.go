package scenario

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ErrTooManyOpenFiles is returned by Run and Sweep when a request failed
// because this process had no file descriptor left (EMFILE, ENFILE): every
// connection is one, and without --targets so is every connection the
// shops accept and make. The attack stops at once; the rows and points
// measured before it are kept, the half-done one is not. Beyond that
// point the shops would refuse connections and embedded etcd would exit
// the process on a file it cannot open.
var ErrTooManyOpenFiles = errors.New("scenario: too many open files")

// outOfFiles returns an error wrapping ErrTooManyOpenFiles if r failed for
// want of a file descriptor, after sent requests; nil otherwise.
func outOfFiles(r *vegeta.Result, sent int) error {
	// syscall.EMFILE's text is "too many open files"; ENFILE's
	// ("... in system") contains it.
	if r.Error == "" || !strings.Contains(r.Error, syscall.EMFILE.Error()) {
		return nil
	}
	return fmt.Errorf("%w: after %d requests: %s", ErrTooManyOpenFiles, sent, r.Error)
}

// connSet is an attack's open connections, so that an attack out of file
// descriptors can close them at once: a request in flight to a shop that
// cannot accept would otherwise hold its descriptor until its timeout, and
// embedded etcd exits the process on the first file it cannot open in
// that time. It is safe for concurrent use.
type connSet struct {
	mu     sync.Mutex
	open   map[*trackedConn]struct{}
	closed bool // by closeAll: a connection dialled after it is closed at once
}

// dial wraps d: every connection it makes is in the set until closed.
func (cs *connSet) dial(d func(ctx context.Context, network, addr string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, set: cs}
		cs.mu.Lock()
		if cs.closed {
			cs.mu.Unlock()
			c.Close()
			return nil, net.ErrClosed
		}
		if cs.open == nil {
			cs.open = map[*trackedConn]struct{}{}
		}
		cs.open[tc] = struct{}{}
		cs.mu.Unlock()
		return tc, nil
	}
}

// closeAll closes every open connection; their requests fail at once.
func (cs *connSet) closeAll() {
	cs.mu.Lock()
	open := cs.open
	cs.open, cs.closed = nil, true
	cs.mu.Unlock()
	for c := range open {
		c.Conn.Close()
	}
}

// trackedConn leaves its set when closed.
type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.open, c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}
