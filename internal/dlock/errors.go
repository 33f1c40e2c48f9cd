package dlock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flashsale/flashsale/internal/rediserr"
)

// NodeError is the failure of one Redlock node: it did not answer in time,
// refused the connection or replied with an error. Err is the cause.
type NodeError struct {
	Node string // "node 2 (127.0.0.1:7103)"
	Err  error
}

func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }

// Unwrap returns the cause, so errors.Is sees through to it.
func (e *NodeError) Unwrap() error { return e.Err }

// RedlockError reports a Redlock acquire, extend or release that reached no
// majority: Err is ErrNotObtained or ErrNotHeld if enough nodes answered,
// ErrUnavailable if fewer than the quorum did; Nodes names the failed ones.
// errors.Is matches Err and every node's cause.
type RedlockError struct {
	Op     string // "acquire", "extend" or "release"
	Key    string
	Err    error
	Agreed int // nodes that granted, extended or released
	Quorum int
	Total  int
	Nodes  []*NodeError
}

func (e *RedlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: redlock %s %q: %d of %d nodes agreed, quorum %d",
		e.Err, e.Op, e.Key, e.Agreed, e.Total, e.Quorum)
	for _, n := range e.Nodes {
		b.WriteString("; ")
		b.WriteString(n.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel followed by the node errors.
func (e *RedlockError) Unwrap() []error {
	errs := []error{e.Err}
	for _, n := range e.Nodes {
		errs = append(errs, n)
	}
	return errs
}

// errReleased and errAbandoned are the causes of a lock context cancelled
// by Release and by Abandon.
var (
	errReleased  = errors.New("dlock: lock released")
	errAbandoned = errors.New("dlock: lock abandoned until it expires")
)

// redisErr translates an error from a Redis call about key, at the
// boundary (package rediserr's rule, with ErrUnavailable).
func redisErr(ctx context.Context, err error, op, key string) error {
	return rediserr.Wrap(ctx, err, ErrUnavailable, "dlock", op, key)
}

// notHeld is the error of a Refresh or Release on a lock that is gone.
func notHeld(key, why string) error {
	return fmt.Errorf("%w: %q %s", ErrNotHeld, key, why)
}
