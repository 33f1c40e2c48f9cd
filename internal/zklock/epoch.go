package zklock

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// A grant's fence is its node's creation zxid; an ensemble rebuilt empty
// counts zxids from the start again, so a grant also carries the epoch, the
// creation time of Root/epoch, read in the fence's session. Why:
// docs/zookeeper.md, "The fence and the epoch".

// errSessionChanged means the session changed while the epoch was read:
// the grant must look at its node again.
var errSessionChanged = errors.New("zklock: the session changed while the epoch was read")

// epochFor returns the epoch of the ensemble that granted session s (the
// creation time of Root/epoch, created if missing), read once per session;
// errSessionChanged if s is no longer live once the answer is in.
func (m *Locker) epochFor(ctx context.Context, s *session) (int64, error) {
	if epoch := s.epoch.Load(); epoch != 0 {
		return epoch, nil
	}
	path := m.epochPath()
	for {
		st, err := m.stat(ctx, path)
		if errors.Is(err, zk.ErrNoNode) {
			err = m.ensure(ctx, path, false)
			if err == nil {
				continue // read what was created, by this client or another
			}
		}
		if err == nil {
			if m.sessions.live(s.id) != s {
				return 0, errSessionChanged
			}
			s.epoch.Store(st.Ctime)
			return st.Ctime, nil
		}
		if !m.retry(ctx, err) {
			return 0, m.zkErr(ctx, err, "read the epoch of", path)
		}
	}
}
