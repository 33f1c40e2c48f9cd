package dlock

import "time"

// The room's side of the release announcements: which keys it listens to,
// what it does when one is announced, and how this process's own releases
// are held back until their announcement has come back (see room.lock).

// listen makes sure key's announcements are heard: called when a head
// first fails to get the key. Announcements sent before the subscription
// is confirmed are missed; the confirmation wakes the head to try again.
func (r *room) listen(key string, ks *keyState) {
	r.mu.Lock()
	start := !ks.listening
	ks.listening = true
	r.mu.Unlock()
	if start {
		r.sub.listen(key)
	}
}

// announced handles the announcement of a release of key: it wakes the
// key's head waiter.
func (r *room) announced(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.keys[key]
	if ks == nil || ks.last == id {
		return // nobody here waits for it, or an echo from another Redlock node
	}
	ks.last = id
	kick(ks.wake)
	if ks.ownID == id {
		r.seen(key, ks)
	}
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
		if ks.ownSeen != nil {
			r.seen(key, ks)
		}
	}
}

// expectRelease records that this process is about to release key and
// announce it with id, so that its next waiter tries again only once the
// announcement has come back, as the other processes' waiters do. (Other
// processes may wait even when none waits here.) It returns a func to call
// if no announcement was sent after all. Nothing is recorded for a key
// whose announcements are not heard here: none would come back.
func (r *room) expectRelease(key, id string) (forget func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.keys[key]
	if ks == nil || !ks.confirmed {
		return func() {}
	}
	if ks.ownSeen != nil {
		close(ks.ownSeen)
	}
	ks.ownID, ks.ownSeen = id, make(chan struct{})
	ks.idle = time.Time{}
	return func() { r.forgetRelease(key, id) }
}

// ownRelease returns the id of this process's release of ks that has not
// yet been announced back, and a channel closed when it is; "" and nil if
// there is none.
func (r *room) ownRelease(ks *keyState) (string, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ks.ownID, ks.ownSeen
}

// forgetRelease stops waiting for the announcement id of key.
func (r *room) forgetRelease(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks := r.keys[key]; ks != nil && ks.ownID == id {
		r.seen(key, ks)
	}
}

// seen clears ks's own pending release. Called with r.mu held.
func (r *room) seen(key string, ks *keyState) {
	close(ks.ownSeen)
	ks.ownID, ks.ownSeen = "", nil
	r.tidy(key, ks)
}
