package zklock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flashsale/flashsale/internal/dlock"
)

// The client's requests take no context: call lets the caller stop waiting
// when ctx ends while the request goes on, so nothing may depend on what it
// does later unless something waits for it (enter.go's sweep).

// call runs op and returns its result, or ctx's error once ctx ends.
func call[T any](ctx context.Context, op func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// children lists dir's children.
func (m *Locker) children(ctx context.Context, dir string) ([]string, error) {
	return call(ctx, func() ([]string, error) {
		kids, _, err := m.conn.Children(dir)
		return kids, err
	})
}

// stat returns path's Stat, or zk.ErrNoNode.
func (m *Locker) stat(ctx context.Context, path string) (*zk.Stat, error) {
	return call(ctx, func() (*zk.Stat, error) {
		ok, st, err := m.conn.Exists(path)
		if err == nil && !ok {
			err = zk.ErrNoNode
		}
		return st, err
	})
}

// remove deletes path, whatever its version.
func (m *Locker) remove(ctx context.Context, path string) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, m.conn.Delete(path, -1) })
	return err
}

// ensure creates path and its missing parents (persistent nodes), the last
// one a container if container is set: the ensemble deletes a container
// once its last child is gone, so a key's directory does not outlive its
// locks. A node that exists already is fine.
func (m *Locker) ensure(ctx context.Context, path string, container bool) error {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		_, err := call(ctx, func() (string, error) {
			if last && container {
				return m.conn.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
			}
			return m.conn.Create(p, nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll))
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// lostAnswer reports whether err means the request may or may not have
// been carried out: it was sent, and the connection was lost before the
// answer came.
func lostAnswer(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed)
}

// transient reports whether err is the connection's, so the same request may
// work after a reconnect: that includes a socket error on write, which the
// client returns as it is; such a request never reached the member whole.
func (m *Locker) transient(err error) bool {
	var nerr net.Error
	switch {
	case m.closed():
		return false
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer),
		errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrSessionMoved),
		errors.Is(err, zk.ErrClosing):
		return true
	case errors.Is(err, context.DeadlineExceeded): // a net.Error too, but a caller's
		return false
	case errors.As(err, &nerr):
		return true
	}
	return false
}

// zkErr translates err, from a request about key, at the boundary: the
// caller's ctx's end as it is; ErrClosed after Close; dlock.ErrUnavailable
// for the connection's errors; anything else (an ACL, a bad path) quoted.
func (m *Locker) zkErr(ctx context.Context, err error, op, key string) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("zklock: %s %q: %w", op, key, err)
	case m.closed():
		return fmt.Errorf("%w: %s %q", ErrClosed, op, key)
	case m.transient(err):
		return fmt.Errorf("%w: %s %q: %w", dlock.ErrUnavailable, op, key, err)
	}
	return fmt.Errorf("zklock: %s %q: %w", op, key, err)
}

// retryPause separates the tries of a request that failed with the
// connection's error; the client queues requests while it reconnects, so
// the pause only keeps a try that fails at once from spinning.
const retryPause = 20 * time.Millisecond

// rest waits retryPause and reports whether ctx is still live then.
func rest(ctx context.Context) bool {
	t := time.NewTimer(retryPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retry reports whether a request that failed with err should be sent
// again: the connection's error, ctx still live after a pause.
func (m *Locker) retry(ctx context.Context, err error) bool {
	if ctx.Err() != nil || !m.transient(err) || !rest(ctx) {
		return false
	}
	m.retried()
	return true
}

// timeoutErr is the error of a Lock whose wait ran out, as dlock's lockers
// give it: ErrTimeout, wrapping ctx.Err() if the caller's ctx ended it,
// and quoting the last try's error.
func timeoutErr(ctx context.Context, key string, wait time.Duration, last error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %q: %w (last try: %v)", dlock.ErrTimeout, key, err, last)
	}
	return fmt.Errorf("%w: %q after %v (last try: %v)", dlock.ErrTimeout, key, wait, last)
}

// checkTTL rejects a ttl under a millisecond, as every dlock mode but off
// does, though the session's timeout is the lease here.
func checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("zklock: ttl %v is under a millisecond", ttl)
	}
	return nil
}
