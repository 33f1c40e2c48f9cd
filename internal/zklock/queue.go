package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

// Errors of a place in the queue, which Lock and TryLock turn into
// dlock's.
var (
	// errGone: the entry's node is gone (its session ended): the
	// acquisition queues again.
	errGone = errors.New("zklock: the queue node is gone")
	// errQueued: ctx ended while the entry waited behind another.
	errQueued = errors.New("zklock: still queued")
	// errNotFirst: one look found the entry behind another (TryLock).
	errNotFirst = errors.New("zklock: not first in the queue")
)

// await returns nil once e's node is first in its queue: the lock is e's.
// With wait unset it looks once (errNotFirst if behind). Otherwise it
// watches only its predecessor until deleted, then lists again (the
// predecessor may have left without the lock): a release wakes one waiter,
// no herd. A session that ends fires the watch and the list finds e's node
// gone (errGone). It returns errQueued if ctx ends once e has been behind
// another node, and zkErr's translation of any other failed request.
func (e *entry) await(ctx context.Context, wait bool) error {
	behind := false // a node was seen before e's: ctx ending now ends a wait
	for {
		names, err := e.m.children(ctx, e.dir)
		if errors.Is(err, zk.ErrNoNode) {
			return errGone
		}
		if err != nil {
			if e.m.retry(ctx, err) {
				continue
			}
			return e.failed(ctx, err, behind)
		}
		pred, ok := e.predecessor(names)
		switch {
		case !ok:
			return errGone
		case pred == "":
			return nil
		case !wait:
			return errNotFirst
		}
		behind = true
		watch, err := call(ctx, func() (<-chan zk.Event, error) {
			_, _, ch, err := e.m.conn.GetW(e.dir + "/" + pred)
			return ch, err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode): // gone before the watch was set
			e.m.retried()
			continue
		case err != nil:
			if e.m.retry(ctx, err) {
				continue
			}
			return e.failed(ctx, err, behind)
		}
		select {
		case <-watch: // deleted, or the session ended: look again
			e.m.retried()
		case <-ctx.Done():
			return fmt.Errorf("%w: %q: %w", errQueued, e.key, ctx.Err())
		}
	}
}

// failed is await's error for a failed request: errQueued if ctx ended it
// once e had been behind another node, zkErr's translation otherwise.
func (e *entry) failed(ctx context.Context, err error, behind bool) error {
	if behind && ctx.Err() != nil {
		return fmt.Errorf("%w: %q: %w", errQueued, e.key, ctx.Err())
	}
	return e.m.zkErr(ctx, err, "wait", e.key)
}

// predecessor returns the node queued just before e's among names, "" if
// e's is the first, and false if e's node is not among them. Another node
// with e's id is a leftover of e's own create (see enter): it is deleted,
// not waited for.
func (e *entry) predecessor(names []string) (string, bool) {
	q := queue(names)
	i := slices.IndexFunc(q, func(n queued) bool { return n.name == e.name })
	if i < 0 {
		return "", false
	}
	for _, n := range slices.Backward(q[:i]) {
		if n.id != e.id {
			return n.name, true
		}
		e.m.deleteLater(e.dir+"/"+n.name, e.sid)
	}
	return "", true
}

// leaveWithin bounds how long a Lock that gives up waits for its node's
// deletion before it returns; the deletion goes on in the background.
const leaveWithin = 500 * time.Millisecond

// leave deletes e's node for an acquisition that gives up, waiting at most
// leaveWithin and never past ctx's deadline; the deletion goes on in the
// background while the session lives.
func (e *entry) leave(ctx context.Context) {
	wait := leaveWithin
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(wait, 0))
	defer cancel()
	err := e.m.remove(lctx, e.path())
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		e.m.deleteLater(e.path(), e.sid)
	}
}
