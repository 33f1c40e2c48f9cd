package zklock

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// entry is one acquisition's place in a key's queue: its node.
type entry struct {
	m    *Locker
	key  string
	dir  string // the key's queue
	id   string // the acquisition's own id, in its node's name
	name string // the node's name, once created
	seq  int64  // its sequence number
	sid  int64  // the session it was created in
}

func (e *entry) path() string { return e.dir + "/" + e.name }

// created is the answer to one create.
type created struct {
	path string
	err  error
}

// enter creates an acquisition's node in key's queue, the protected way: a
// create whose answer was lost may have made a node that would block the
// key for the session's life, so the name carries the acquisition's id and
// enter looks for it (find) before creating again. If ctx ends with a
// create unanswered, a background sweep deletes what it made. Connection
// errors are retried until ctx ends, a missing directory is created (a
// container); errors come back through zkErr, and nothing is sent after ctx
// ended.
func (m *Locker) enter(ctx context.Context, key string) (*entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, m.zkErr(ctx, err, "acquire", key)
	}
	e := &entry{m: m, key: key, dir: m.dir(key), id: uuid.NewString()}
	lost := false // a create's answer was lost: look before creating again
	for {
		var err error
		if lost {
			var names []string
			if names, err = e.find(ctx); err == nil && len(names) > 0 {
				return e.at(names[0]), nil // any other is a leftover: see predecessor
			}
			lost = err != nil // not found: create again
		} else {
			answer := make(chan created, 1)
			go func() {
				p, err := m.conn.Create(nodePrefix(e.dir, e.id), nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
				answer <- created{p, err}
			}()
			var r created
			select {
			case r = <-answer:
			case <-ctx.Done():
				m.sweep(e, answer)
				return nil, m.zkErr(ctx, ctx.Err(), "acquire", key)
			}
			switch err = r.err; {
			case err == nil:
				return e.at(base(r.path)), nil
			case errors.Is(err, zk.ErrNoNode):
				err = m.ensure(ctx, e.dir, true)
			case lostAnswer(err):
				lost = true
			}
		}
		if err != nil && (ctx.Err() != nil || !m.transient(err) || !rest(ctx)) {
			if lost {
				m.sweep(e, nil)
			}
			return nil, m.zkErr(ctx, err, "acquire", key)
		}
		m.retried()
	}
}

// at records that e's node is name, created in the current session.
func (e *entry) at(name string) *entry {
	e.name = name
	if n, ok := parseNode(name); ok {
		e.seq = n.seq
	}
	if s := e.m.sessions.current(); s != nil {
		e.sid = s.id
	}
	return e
}

// find returns e's nodes by id, in queue order: none or one (two if a
// create landed after a find missed it). It syncs first, so the member has
// caught up with the leader and a create still in flight elsewhere is
// refused once the session has moved.
func (e *entry) find(ctx context.Context) ([]string, error) {
	_, err := call(ctx, func() (string, error) { return e.m.conn.Sync(e.dir) })
	var mine []string
	if err == nil {
		var names []string
		names, err = e.m.children(ctx, e.dir)
		for _, n := range queue(names) {
			if n.id == e.id {
				mine = append(mine, n.name)
			}
		}
	}
	if errors.Is(err, zk.ErrNoNode) { // no directory: no node
		return nil, nil
	}
	return mine, err
}

// sweep deletes, in the background, a node e may have left: it waits for
// the create's answer (if answer is not nil), then finds and deletes e's
// node, trying while the owning session lives.
func (m *Locker) sweep(e *entry, answer <-chan created) {
	m.later(func() {
		if answer != nil {
			select {
			case <-answer:
			case <-m.bgCtx.Done():
				return
			}
		}
		s := m.sessions.current()
		if s == nil {
			return
		}
		for m.alive(s.id) {
			names, err := e.find(m.bgCtx)
			if err == nil {
				for _, name := range names {
					m.deleteLater(e.dir+"/"+name, s.id)
				}
				return
			}
			m.pause(10 * retryPause)
		}
	})
}

// deleteLater deletes path in the background, trying until it is gone or
// the session sid, which owns it, has ended (which deletes it too).
func (m *Locker) deleteLater(path string, sid int64) {
	m.later(func() {
		for m.alive(sid) {
			err := m.remove(m.bgCtx, path)
			if err == nil || errors.Is(err, zk.ErrNoNode) || !m.transient(err) {
				return
			}
			m.pause(10 * retryPause)
		}
	})
}

// alive reports whether the Locker is open and sid is its current session
// (live or given up: the ensemble may still have it).
func (m *Locker) alive(sid int64) bool {
	s := m.sessions.current()
	return !m.closed() && s != nil && s.id == sid
}

// pause waits d, or until Close.
func (m *Locker) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-m.bgCtx.Done():
	}
}
