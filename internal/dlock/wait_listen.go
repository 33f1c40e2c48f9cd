package dlock

import (
	"context"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/announce"
)

// The room's side of the release announcements: which keys it listens to,
// what it does when a release is announced or announcements may have been
// lost, and how it announces a release itself. (Which releases are
// announced at once is the fairness rule's to say: wait_fair.go.)

// listen makes sure key's announcements are heard: called when a head
// first fails to get the key. Announcements sent before the subscription
// is confirmed are missed; the confirmation wakes the head to try again.
// It subscribes under r.mu, as the sweeper unsubscribes, so that the two
// reach the subscriber in the order the key's state saw them.
func (r *room) listen(key string, ks *keyState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ks.listening && r.keys[key] == ks {
		ks.listening = true
		r.sub.Listen(key)
	}
}

// heard reports whether the key's announcements reach this room from
// enough nodes to tell that a release freed the lock: from a quorum of
// them, each of which has confirmed the subscription since its last gap.
// Called with r.mu held.
func (r *room) heard(ks *keyState) bool {
	n := 0
	for _, ok := range ks.confirmed {
		if ok {
			n++
		}
	}
	return n >= r.quorum
}

// announced handles one node's announcement of a release of key, id being
// the release's token. A single-node lock is free at once; a Redlock lock
// only once a majority of its nodes have run the release, so the head is
// woken by the quorum-th announcement of a release, the first that can find
// the lock free (earlier ones would send it to find the old token still on
// a majority, and then to sleep until the holder's TTL).
func (r *room) announced(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.keys[key]
	if ks == nil {
		return // nobody here waits for it
	}
	if r.quorum > 1 && ks.echoes.add(id) != r.quorum {
		return
	}
	kick(ks.wake)
	r.ownHeard(key, ks)
}

// echoes counts, per release token, how many nodes have announced that
// release of one key (Redlock). It remembers the latest echoMemory
// releases and forgets the oldest first. Releases of one key follow one
// another, so a release whose announcements are still arriving is among
// the latest few: forgetting never loses a count a waiter still needs,
// and what is kept stays bounded when some node's announcements never
// come. The zero value is ready to use; guarded by the room's mu.
type echoes struct {
	counts map[string]int
	order  []string // the remembered tokens, oldest first
}

const echoMemory = 16

// add counts one node's announcement of release id and returns how many
// nodes have announced it so far.
func (e *echoes) add(id string) int {
	if e.counts == nil {
		e.counts = make(map[string]int)
	}
	if _, ok := e.counts[id]; !ok {
		if len(e.order) == echoMemory {
			delete(e.counts, e.order[0])
			e.order = append(e.order[:0], e.order[1:]...)
		}
		e.order = append(e.order, id)
	}
	e.counts[id]++
	return e.counts[id]
}

// confirmed handles node's confirmation that key's channel is subscribed
// to: from now on its announcements are heard, and the head tries again in
// case one was missed before.
func (r *room) confirmed(node int, key string) {
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
func (r *room) gap(node int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, ks := range r.keys {
		ks.confirmed[node] = false
		kick(ks.wake)
		r.ownHeard(key, ks)
	}
}

// announce publishes the release id of key on every node, as the release
// itself would have. It works after close too.
func (r *room) announce(key, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, c := range r.sub.Clients() {
		_ = c.Publish(ctx, announce.Channel(key), id).Err() // lost: the waiters' fallback wakes them
	}
}
