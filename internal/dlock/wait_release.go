package dlock

import (
	"context"
	"time"
)

// How this process's own releases of a key reach the other processes'
// waiters: announced by the release itself, or held back in the middle of
// a run and announced after graceFor unless a waiter here takes the key
// back first (see fairTurns).

// releasing is told by l, got by a waiter, that it is about to be released,
// and returns what to call once the release has been sent, with whether it
// went through. It applies fairTurns: a release in the middle of a run is
// quiet, and announced only if no waiter here takes the key back within
// graceFor; the run's last release is announced, and the next head waits
// for it to come back. Either way the next head here is woken.
func (r *room) releasing(l *Lock) (done func(released bool)) {
	r.mu.Lock()
	ks := r.keys[l.key]
	quiet := ks != nil && ks.listening && ks.run < fairTurns && r.ctx.Err() == nil
	if ks != nil && !quiet {
		r.expectRelease(ks)
	}
	r.mu.Unlock()
	if quiet {
		l.mu.Lock()
		l.quiet = true
		l.mu.Unlock()
	}
	return func(released bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		ks := r.keys[l.key]
		switch {
		case ks == nil:
			if quiet && released { // swept meanwhile: nobody here takes it back
				go r.announce(l.key, l.token)
			}
			return
		case quiet && released:
			stopGrace(ks)
			g := &grace{id: l.token}
			g.timer = time.AfterFunc(graceFor, func() { r.graceOver(l.key, g) })
			ks.grace, ks.idle = g, time.Time{} // in use until the grace is over
		case quiet:
			// It failed, but may have deleted the key all the same: say so
			// rather than leave the other processes asleep.
			go r.announce(l.key, l.token)
		case !released && ks.ownSeen != nil:
			r.seen(l.key, ks) // it may not have been announced: do not wait for it
		}
		if ks.holder == l {
			ks.holder = nil
			kick(ks.wake)
			r.tidy(l.key, ks)
		}
	}
}

// grace is a release held back, to be announced when its timer fires.
type grace struct {
	id    string // the release's token
	timer *time.Timer
}

// graceOver announces the release held back as g, unless a waiter here has
// taken the key back since.
func (r *room) graceOver(key string, g *grace) {
	r.mu.Lock()
	ks := r.keys[key]
	mine := ks != nil && ks.grace == g
	if mine {
		ks.grace = nil
		r.tidy(key, ks)
	}
	r.mu.Unlock()
	if mine {
		r.announce(key, g.id)
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

// stopGrace cancels ks's held-back announcement, if any. Called with r.mu
// held.
func stopGrace(ks *keyState) {
	if ks.grace != nil {
		ks.grace.timer.Stop()
		ks.grace = nil
	}
}

// retaking records that the head of ks's key is about to try for it: a
// release of this process held back is then the head's to announce, if it
// leaves without the key (someone else who got it meanwhile announces its
// own release). It returns that release's id, or "" if none was held back.
func (r *room) retaking(ks *keyState) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks.grace == nil {
		return ""
	}
	id := ks.grace.id
	stopGrace(ks)
	return id
}
