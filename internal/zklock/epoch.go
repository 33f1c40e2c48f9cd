package zklock

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// The fence, and the ensemble's epoch beside it.
//
// A grant's fence is the creation zxid of its node. A zxid numbers every
// change the ensemble makes, in the one order it makes them, and only
// grows: its high 32 bits count the leaders the ensemble has had, its low
// 32 bits the changes under the current leader. A node is first in its
// queue only once every node created before it (a smaller sequence
// number, so a smaller zxid) is gone, so each grant of a key carries a
// larger fence than the grant before it, across elections too.
//
// But an ensemble rebuilt empty (new members on empty disks) counts its
// zxids from the start again, and a store that has seen fence 0x500000012
// would refuse every new holder until the zxids pass it. etcd's lock has
// the same problem with its revisions, and dlock gives every etcd grant
// the cluster's epoch, a number the cluster keeps that a rebuilt cluster
// has anew and larger; stores order grants by (epoch, fence). The
// analogue here is the node Root/epoch: the first lock taken on an
// ensemble creates it, and its creation time, which the ensemble's leader
// stamps on it from its own clock (milliseconds since 1970), is the
// ensemble's epoch. A rebuilt ensemble has no such node, so its first
// lock creates one with a later time: its first holder is accepted at
// once, and a stale holder of the old ensemble, with the older epoch, is
// refused.
//
// A grant's epoch and its fence must come from the same ensemble. They
// do: both are read in one session (a session belongs to the ensemble that
// granted it; a rebuilt ensemble does not know it, and the client gets a
// new one), and epochFor reads the epoch again for each new session.
//
// A rebuilt ensemble lets a new client in at once, and an old one only
// later: a member turns away a client that has seen a larger zxid than its
// own (lest it read the past), and the client keeps the last zxid it saw
// across reconnections. A Locker of the old ensemble is not ready until
// the new one's zxids pass that one; a restarted shop is ready at once.
//
// What it does not promise, as for etcd: the epoch is a wall clock, so it
// relies on the new ensemble's leader's clock being later than the old
// one's was at its first lock. And an ensemble restored from a backup of
// its data brings the old epoch back with the old zxids: such an ensemble
// must be moved past every zxid handed out since the backup before it
// serves locks (or given a new epoch: delete Root/epoch while no lock is
// held).

// errSessionChanged means the session changed while the epoch was read:
// the grant must look at its node again.
var errSessionChanged = errors.New("zklock: the session changed while the epoch was read")

// epochFor returns the epoch of the ensemble that granted session s: the
// creation time of Root/epoch, which it creates if it is missing. It
// reads it once per session. It returns errSessionChanged if s is no
// longer the live session once the answer is in (the answer may then come
// from another session).
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
