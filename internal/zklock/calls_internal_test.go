package zklock

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flashsale/flashsale/internal/dlock"
)

// TestZkErr: a failed request's error, translated at the boundary: the
// caller's ctx's end as it is, ErrClosed after Close, dlock.ErrUnavailable
// for the connection's errors (the same request may work once the client
// has reconnected), anything else quoted and not retried.
func TestZkErr(t *testing.T) {
	// What the client hands a request whose write failed (go-zookeeper's
	// sendData): the socket's error as it is.
	writeFailed := &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}
	open := bareLocker(t)
	closed := bareLocker(t)
	closed.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	expired, cancelExpired := context.WithDeadline(live, time.Now())
	defer cancelExpired()
	for _, tc := range []struct {
		name      string
		m         *Locker
		ctx       context.Context
		err       error
		transient bool
		want      []error
		wantNot   error
	}{
		{"connection closed", open, live, zk.ErrConnectionClosed, true, []error{dlock.ErrUnavailable, zk.ErrConnectionClosed}, nil},
		{"no server", open, live, zk.ErrNoServer, true, []error{dlock.ErrUnavailable}, nil},
		{"session expired", open, live, zk.ErrSessionExpired, true, []error{dlock.ErrUnavailable}, nil},
		{"session moved", open, live, zk.ErrSessionMoved, true, []error{dlock.ErrUnavailable}, nil},
		{"client closing", open, live, zk.ErrClosing, true, []error{dlock.ErrUnavailable}, nil},
		{"write failed", open, live, writeFailed, true, []error{dlock.ErrUnavailable, syscall.EPIPE}, nil},
		{"no auth", open, live, zk.ErrNoAuth, false, []error{zk.ErrNoAuth}, dlock.ErrUnavailable},
		{"bad arguments", open, live, zk.ErrBadArguments, false, []error{zk.ErrBadArguments}, dlock.ErrUnavailable},
		{"caller gave up", open, cancelled, context.Canceled, false, []error{context.Canceled}, dlock.ErrUnavailable},
		{"caller's deadline", open, expired, context.DeadlineExceeded, false, []error{context.DeadlineExceeded}, dlock.ErrUnavailable},
		{"caller gave up, connection lost", open, cancelled, zk.ErrConnectionClosed, true, []error{zk.ErrConnectionClosed}, dlock.ErrUnavailable},
		{"closed", closed, live, zk.ErrConnectionClosed, false, []error{ErrClosed}, dlock.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.transient(tc.err); got != tc.transient {
				t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.transient)
			}
			err := tc.m.zkErr(tc.ctx, tc.err, "acquire", "k1")
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("zkErr = %v, want it to wrap %v", err, w)
				}
			}
			if tc.wantNot != nil && errors.Is(err, tc.wantNot) {
				t.Errorf("zkErr = %v, must not wrap %v", err, tc.wantNot)
			}
			if !strings.Contains(err.Error(), `acquire "k1"`) {
				t.Errorf("zkErr = %v, want it to name the step and the key", err)
			}
		})
	}
	if !lostAnswer(zk.ErrConnectionClosed) || lostAnswer(zk.ErrNoServer) || lostAnswer(zk.ErrNodeExists) || lostAnswer(writeFailed) {
		t.Error("lostAnswer: only a connection closed with the request on its way leaves its outcome unknown")
	}
}

// TestTimeoutErr: a wait that ran out is dlock.ErrTimeout, wrapping the
// caller's ctx's error when that ended it, and quoting the last try.
func TestTimeoutErr(t *testing.T) {
	last := errors.New("still queued")
	err := timeoutErr(context.Background(), "k", 300*time.Millisecond, last)
	if !errors.Is(err, dlock.ErrTimeout) || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 300ms (last try: still queued)") {
		t.Errorf("wait ran out: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = timeoutErr(ctx, "k", time.Minute, last)
	if !errors.Is(err, dlock.ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Errorf("caller cancelled: %v, want ErrTimeout and context.Canceled", err)
	}
}

// TestCall: a request runs unless ctx has ended, and the caller waits for
// it only as long as ctx lasts.
func TestCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	if v, err := call(ctx, func() (int, error) { ran = true; return 7, nil }); v != 7 || err != nil || !ran {
		t.Errorf("call = %d, %v (ran %v), want 7, nil", v, err, ran)
	}
	cancel()
	ran = false
	if _, err := call(ctx, func() (int, error) { ran = true; return 7, nil }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("call on an ended ctx = %v (ran %v), want context.Canceled and no request", err, ran)
	}

	stuck := make(chan struct{})
	defer close(stuck)
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := call(short, func() (int, error) { <-stuck; return 0, nil })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("call of a request with no answer = %v after %v, want DeadlineExceeded at ctx's end", err, time.Since(start))
	}
}

// TestCheckConfig: servers are host:port, the root an absolute znode
// path, a ttl at least a millisecond.
func TestCheckConfig(t *testing.T) {
	for _, tc := range []struct {
		servers []string
		ok      bool
	}{
		{[]string{"127.0.0.1:2181", "[::1]:2182", "zk3:2183"}, true},
		{nil, false},
		{[]string{"127.0.0.1:2181", "zk2"}, false},
		{[]string{":2181"}, false},
		{[]string{"zk1:"}, false},
	} {
		if err := checkServers(tc.servers); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrConfig)) {
			t.Errorf("checkServers(%q) = %v, want ok %v (else ErrConfig)", tc.servers, err, tc.ok)
		}
	}
	for root, ok := range map[string]bool{"/a": true, "/a/b": true, "/": false, "a/b": false, "/a/": false, "/a//b": false, "": false} {
		if err := checkRoot(root); (err == nil) != ok || (err != nil && !errors.Is(err, ErrConfig)) {
			t.Errorf("checkRoot(%q) = %v, want ok %v (else ErrConfig)", root, err, ok)
		}
	}
	m := bareLocker(t)
	for ttl, ok := range map[time.Duration]bool{time.Millisecond: true, time.Hour: true, 999 * time.Microsecond: false, 0: false, -time.Second: false} {
		if err := m.check(ttl); (err == nil) != ok {
			t.Errorf("check(ttl %v) = %v, want ok %v", ttl, err, ok)
		}
	}
	m.Close()
	if err := m.check(time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("check after Close = %v, want ErrClosed", err)
	}
}

// bareLocker is a Locker with no client, closed when the test ends: for
// what needs its state and no ensemble.
func bareLocker(t *testing.T) *Locker {
	m := &Locker{sessions: newTracker(time.Second)}
	m.bgCtx, m.bgCancel = context.WithCancel(context.Background())
	t.Cleanup(func() { m.Close() })
	return m
}
