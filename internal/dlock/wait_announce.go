package dlock

import (
	"context"
	"time"
)

// The room's side of the release announcements: which keys it listens to,
// what it does when a release is announced or announcements may have been
// lost, and how it announces a release itself. (Which releases are
// announced at once is the fairness policy's to say: wait_fair.go.)

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
		r.sub.listen(key)
	}
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
	if r.quorum > 1 {
		if _, counting := ks.heard[id]; !counting && len(ks.heard) >= 16 {
			clear(ks.heard) // old releases: all heard, or never will be
		}
		if ks.heard == nil {
			ks.heard = make(map[string]int)
		}
		if ks.heard[id]++; ks.heard[id] != r.quorum {
			return
		}
	}
	kick(ks.wake)
	r.ownHeard(key, ks)
}

// confirmed handles a node's confirmation that key's channel is subscribed
// to: from now on its announcements are heard, and the head tries again in
// case one was missed before.
func (r *room) confirmed(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks := r.keys[key]; ks != nil {
		ks.confirmed = true
		kick(ks.wake)
	}
}

// gap is called when a connection dropped: announcements may have been
// lost with it. Until a confirmation comes again, no own release is waited
// for; every head is woken to ask Redis again, and if the node is down, it
// reports that at once instead of after its sleep.
func (r *room) gap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, ks := range r.keys {
		ks.confirmed = false
		kick(ks.wake)
		r.ownHeard(key, ks)
	}
}

// announce publishes the release id of key on every node, as the release
// itself would have. It works after close too.
func (r *room) announce(key, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, c := range r.sub.clients {
		_ = c.Publish(ctx, releaseChannel(key), id).Err() // lost: the waiters' fallback wakes them
	}
}
