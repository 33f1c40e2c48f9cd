package waitroom

import (
	"context"
	"slices"
	"sync"
	"time"
)

// The room's side of the release announcements, beyond listen and
// announced (wait.go): whether a key's are heard from enough nodes, how a
// Redlock release's are counted, what it does when a subscription is
// confirmed or announcements may have been lost, and how it announces a
// release itself. (Which releases are announced at once is the fairness
// rule's to say: fair.go.)

// heard reports whether the key's announcements reach this room from
// enough nodes to tell that a release freed the lock: from a quorum of
// them, each of which has confirmed the subscription since its last gap.
// Called with r.mu held.
func (r *Room) heard(ks *keyState) bool {
	n := 0
	for _, ok := range ks.confirmed {
		if ok {
			n++
		}
	}
	return n >= r.quorum
}

// echoes counts, per release token, how many nodes have announced that
// release of one key (Redlock), until a quorum of them have: then the
// release is heard, and the token joins the last echoDone heard ones,
// whose later announcements (from the nodes beyond the quorum, or a node
// that lagged) are dropped rather than counted again. At most
// echoCounting releases are counted at once, the oldest forgotten first,
// so what is kept stays bounded when some node's announcements never
// come. A release is forgotten before its quorum only when that many
// releases of the key newer than it, or older than the last echoDone
// heard, are announced meanwhile; a head it would have woken then sleeps
// until its fallback (at most a second). The zero value is ready to use;
// guarded by the room's mu.
type echoes struct {
	counts   map[string]int
	counting []string // the tokens being counted, oldest first
	done     map[string]bool
	heard    []string // the tokens heard from a quorum, oldest first
}

const (
	echoCounting = 16
	echoDone     = 256
)

// add counts one node's announcement of release id and reports whether
// it is the quorum-th: the one that makes the release heard.
func (e *echoes) add(id string, quorum int) bool {
	if e.done[id] {
		return false // heard already
	}
	if e.counts == nil {
		e.counts, e.done = make(map[string]int), make(map[string]bool)
	}
	if _, ok := e.counts[id]; !ok {
		if len(e.counting) == echoCounting {
			delete(e.counts, e.counting[0])
			e.counting = append(e.counting[:0], e.counting[1:]...)
		}
		e.counting = append(e.counting, id)
	}
	if e.counts[id]++; e.counts[id] < quorum {
		return false
	}
	delete(e.counts, id)
	e.counting = slices.DeleteFunc(e.counting, func(t string) bool { return t == id })
	if len(e.heard) == echoDone {
		delete(e.done, e.heard[0])
		e.heard = append(e.heard[:0], e.heard[1:]...)
	}
	e.heard = append(e.heard, id)
	e.done[id] = true
	return true
}

// confirmed handles node's confirmation that key's channel is subscribed
// to: from now on its announcements are heard, and the head tries again in
// case one was missed before.
func (r *Room) confirmed(node int, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks := r.keys[key]; ks != nil {
		ks.confirmed[node] = true
		kick(ks.wake)
	}
}

// gap is called when node's connection dropped: announcements may have
// been lost with it. Until the node confirms again, its announcements do
// not count as heard; no own release is awaited any longer (its echo may
// be lost), and every head is woken to ask Redis again: if the node is
// down, it reports that at once instead of after its sleep.
func (r *Room) gap(node int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, ks := range r.keys {
		ks.confirmed[node] = false
		kick(ks.wake)
		r.ownHeard(key, ks)
	}
}

// announce publishes the release id of key on every node, as the release
// itself would have, on all of them at once and each within its own
// second: a slow node must not hold back the quorum of the others. It
// works after close too.
func (r *Room) announce(key, id string) {
	var wg sync.WaitGroup
	for _, c := range r.sub.Clients() {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = c.Publish(ctx, Channel(key), id).Err() // lost: the waiters' fallback wakes them
		})
	}
	wg.Wait()
}
