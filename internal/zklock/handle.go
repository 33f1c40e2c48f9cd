package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flashsale/flashsale/internal/dlock"
)

// grant returns e's handle once e's node is first in its queue: the node's
// creation zxid is the fence, its owner must be this client's live session,
// and the epoch is that session's. The handle's Context derives from hctx.
// It returns errGone if the node is gone or its session ended.
func (e *entry) grant(ctx, hctx context.Context) (*dlock.Lock, error) {
	for {
		st, err := e.m.stat(ctx, e.path())
		if errors.Is(err, zk.ErrNoNode) {
			return nil, errGone
		}
		if err != nil {
			if e.m.retry(ctx, err) {
				continue
			}
			return nil, e.m.zkErr(ctx, err, "acquire", e.key)
		}
		s := e.m.sessions.live(st.EphemeralOwner)
		if s == nil {
			if cur := e.m.sessions.current(); cur == nil || cur.id != st.EphemeralOwner {
				return nil, errGone // an older session's node: the ensemble ended it
			}
			// This client gave the session up, but the ensemble still has
			// it: once the client hears from it again, look again.
			if _, err := e.m.sessions.awaitLive(ctx); err != nil {
				return nil, e.m.zkErr(ctx, err, "acquire", e.key)
			}
			continue
		}
		epoch, err := e.m.epochFor(ctx, s)
		if errors.Is(err, errSessionChanged) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return e.handle(hctx, s, st.Czxid, epoch), nil
	}
}

// handle returns the dlock handle of e, held in session s.
func (e *entry) handle(hctx context.Context, s *session, fence, epoch int64) *dlock.Lock {
	ctx, cancel := context.WithCancelCause(hctx)
	stop := context.AfterFunc(s.ctx, func() {
		cancel(fmt.Errorf("%w: %q: %w", dlock.ErrNotHeld, e.key, context.Cause(s.ctx)))
	})
	h := &holder{e: e, s: s, cancel: cancel, stop: stop}
	return dlock.NewHandle(ctx, dlock.Grant{
		Key: e.key, Token: e.name, Fence: fence, Epoch: epoch,
		TTL: s.timeout, ValidUntil: e.m.sessions.until(s),
	}, h)
}

// holder is what a handle calls to refresh, release or abandon its lock
// (dlock.Holder).
type holder struct {
	e      *entry
	s      *session
	cancel context.CancelCauseFunc // the handle's Context's parent
	stop   func() bool             // unties it from the session's context
}

// errLetGo cancels a holder's parent context once the handle is released
// or abandoned (the handle's own context was cancelled first).
var errLetGo = errors.New("zklock: let go")

// Refresh checks that the node is still there, in the session, and
// returns how long the session is sure to last. The session's timeout is
// the ensemble's: ttl is ignored.
func (h *holder) Refresh(ctx context.Context, _ time.Duration) (time.Duration, error) {
	if cause := context.Cause(h.s.ctx); cause != nil {
		return 0, fmt.Errorf("%w: %q: %w", dlock.ErrNotHeld, h.e.key, cause)
	}
	st, err := h.e.m.stat(ctx, h.e.path())
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return 0, fmt.Errorf("%w: %q: its node is gone", dlock.ErrNotHeld, h.e.key)
	case err != nil:
		return 0, h.e.m.zkErr(ctx, err, "refresh", h.e.key)
	case st.EphemeralOwner != h.s.id:
		return 0, fmt.Errorf("%w: %q: its node belongs to another session", dlock.ErrNotHeld, h.e.key)
	}
	if cause := context.Cause(h.s.ctx); cause != nil {
		return 0, fmt.Errorf("%w: %q: %w", dlock.ErrNotHeld, h.e.key, cause)
	}
	return time.Until(h.e.m.sessions.until(h.s)), nil
}

// Release deletes the node, retrying while the connection fails and ctx
// lasts: nil if deleted (or found gone after a delete whose answer was lost,
// in the same session), dlock.ErrNotHeld if the node or session was gone.
// Cut short by ctx, the delete goes on in the background while the session
// lives, and Release returns dlock.ErrUnavailable.
func (h *holder) Release(ctx context.Context) error {
	defer h.cancel(errLetGo)
	defer h.stop()
	m, path := h.e.m, h.e.path()
	sent := false // a delete went out and its answer was lost
	for {
		err := m.remove(ctx, path)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode) && sent && m.alive(h.s.id):
			return nil
		case errors.Is(err, zk.ErrNoNode):
			return fmt.Errorf("%w: %q: its node was gone (its session ended)", dlock.ErrNotHeld, h.e.key)
		case !m.alive(h.s.id):
			return fmt.Errorf("%w: %q: its session ended", dlock.ErrNotHeld, h.e.key)
		}
		sent = sent || lostAnswer(err)
		if ctx.Err() != nil || !m.transient(err) || !rest(ctx) {
			m.deleteLater(path, h.s.id)
			return fmt.Errorf("%w: release %q: %w (deleting it in the background)", dlock.ErrUnavailable, h.e.key, err)
		}
	}
}

// Abandon lets the node stay for one session timeout, as long as the
// session would keep it if this process stopped, then deletes it.
func (h *holder) Abandon() {
	h.stop()
	h.cancel(errLetGo)
	m := h.e.m
	m.later(func() {
		m.pause(h.s.timeout)
		if m.alive(h.s.id) {
			m.deleteLater(h.e.path(), h.s.id)
		}
	})
}
