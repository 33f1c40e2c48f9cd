package waitroom

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Room is one locker's waiting room. Per key it keeps the goroutines of
// this process that wait for the lock, in arrival order. Only the first of
// them, the head, talks to Redis; the others wait for their turn without a
// single round trip. So however many goroutines a process has waiting,
// Redis sees one contender per process, and the head is woken by the
// release announcements that the subscriber delivers (wait.go). A Room
// is safe for concurrent use.
type Room struct {
	id     string // this room's name in a key's turns (see turns.go)
	sub    *Subscriber
	quorum int // the announcements of one release it takes to free the lock

	startOnce sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu   sync.Mutex
	keys map[string]*keyState
	rtt  time.Duration // the smoothed round trip of its acquires in turns (turns.go)
}

// keyState is what a room knows about one key. It exists while someone
// waits for the key, holds it after waiting, or while the fairness rule
// has a release of it held back or awaited; and, once its announcements are
// listened to, for keepIdle after that, so that a key contended again soon
// does not need subscribing again. Guarded by the room's mu.
type keyState struct {
	queue  []chan struct{} // the waiters; each channel is closed when that waiter becomes head
	wake   chan struct{}   // (buffered 1) a release of the key was announced
	holder Held            // the lock a waiter of this process got, until it is released

	listening bool      // its channel is subscribed to (since a head first failed to get it)
	confirmed []bool    // per node: it confirmed the subscription since its last gap
	echoes    echoes    // Redlock: how many nodes announced each recent release
	idle      time.Time // when it last became idle, if listening; zero while in use
	place     int64     // this room's place in the key's turns, 0 if none (turns.go)

	fairKey // the fairness rule's state (fair.go)
}

// keepIdle is how long an idle key's subscription is kept.
const keepIdle = 2 * time.Second

// New returns the waiting room of a locker on clients, its nodes: a
// release frees the lock once quorum of them have announced it (1 but for
// Redlock). Its subscriber starts with the first Wait; Close stops it.
func New(clients []redis.UniversalClient, quorum int) *Room {
	r := &Room{id: windowed + uuid.NewString(), keys: make(map[string]*keyState), quorum: quorum}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.sub = NewSubscriber(clients, r.announced, r.confirmed, r.gap)
	return r
}

// start starts the subscriber and the sweeper of idle keys, once.
func (r *Room) start() {
	r.sub.Start()
	r.startOnce.Do(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.ctx.Err() == nil { // not closed
			r.wg.Add(1)
			go r.sweep()
		}
	})
}

// Close stops listening for releases, announces the releases it held
// back, and waits for its goroutines to end. The room keeps working, though
// its waiters then only wake when the holder's TTL would run out. It does
// not close the clients. Calling it again does nothing.
func (r *Room) Close() {
	r.mu.Lock()
	r.cancel()
	held := r.stopHoldingBack() // releases held back: announce them now
	r.mu.Unlock()
	for key, token := range held {
		r.announce(key, token)
	}
	r.wg.Wait()
	r.sub.Close()
}

// join queues a waiter for key and returns its state and the channel that is
// closed when the waiter is at the head of the queue.
func (r *Room) join(key string) (*keyState, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.state(key)
	turn := make(chan struct{})
	ks.queue = append(ks.queue, turn)
	if len(ks.queue) == 1 {
		close(turn)
	}
	return ks, turn
}

// leave takes a waiter out of the queue, handing the head on if it had it.
func (r *Room) leave(key string, ks *keyState, turn chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range ks.queue {
		if t != turn {
			continue
		}
		ks.queue = append(ks.queue[:i], ks.queue[i+1:]...)
		if i == 0 && len(ks.queue) > 0 {
			close(ks.queue[0])
		}
		if len(ks.queue) == 0 {
			ks.place = 0 // nobody here waits any more: the room leaves the line
		}
		break
	}
	r.tidy(key, ks)
}

// hold records that the head of ks's queue got the lock l: l's release
// then goes through this room (Releasing, which its lock calls), and the
// fairness rule counts the grant; and, if the key is contended here (the head had to wait, or
// others wait behind it), l is the holder that the next head waits for
// instead of asking Redis.
func (r *Room) hold(ks *keyState, l Held, waited bool, head *fairHead) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head.won()
	if waited || len(ks.queue) > 1 {
		ks.holder = l
	}
}

// localHolder returns the lock a waiter of this process got on ks's key and
// has not released yet, or nil.
func (r *Room) localHolder(ks *keyState) Held {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ks.holder
}

// Abandoned is told by its lock that l, which a waiter here got, is let go
// without a release: nothing is announced, and the next head here asks
// Redis, which has the key until it expires.
func (r *Room) Abandoned(l Held) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.letGo(l, r.keys[l.Key()])
}

// letGo is called once l, which a waiter here got, is released or
// abandoned: the next head stops waiting for it. Called with r.mu held.
func (r *Room) letGo(l Held, ks *keyState) {
	if ks != nil && ks.holder == l {
		ks.holder = nil
		kick(ks.wake)
		r.tidy(l.Key(), ks)
	}
}

// state returns key's state, creating it, and marks it in use. Called with
// r.mu held.
func (r *Room) state(key string) *keyState {
	ks := r.keys[key]
	if ks == nil {
		ks = &keyState{wake: make(chan struct{}, 1), confirmed: make([]bool, len(r.sub.Clients()))}
		r.keys[key] = ks
	}
	ks.idle = time.Time{}
	return ks
}

// tidy drops key's state once nothing refers to it, or, if its channel is
// listened to, marks it idle for the sweeper. Called with r.mu held.
func (r *Room) tidy(key string, ks *keyState) {
	if len(ks.queue) > 0 || ks.holder != nil || ks.busy() || r.keys[key] != ks {
		return
	}
	if ks.listening {
		ks.idle = time.Now()
		return
	}
	delete(r.keys, key)
}

// sweep drops the keys idle for keepIdle, and stops listening to them,
// every keepIdle/2 until the room closes.
func (r *Room) sweep() {
	defer r.wg.Done()
	t := time.NewTicker(keepIdle / 2)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case now := <-t.C:
			r.sweepIdle(now)
		}
	}
}

// sweepIdle drops the keys idle for more than keepIdle at now, and stops
// listening to them. It unsubscribes under r.mu, as listen subscribes: a
// waiter that comes back for a swept key then creates fresh state and
// subscribes after the unsubscription, never before it.
func (r *Room) sweepIdle(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var stale []string
	for key, ks := range r.keys {
		if !ks.idle.IsZero() && now.Sub(ks.idle) > keepIdle {
			delete(r.keys, key)
			stale = append(stale, key)
		}
	}
	if len(stale) > 0 {
		r.sub.Stop(stale...)
	}
}

// Queued returns how many goroutines wait for key here, the head among
// them: what a test waits for before it releases.
func (r *Room) Queued(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ks := r.keys[key]; ks != nil {
		return len(ks.queue)
	}
	return 0
}

// Hears reports whether a goroutine waits for key here and will hear its
// next release: a waiter is queued, and a quorum of the nodes confirm the
// subscription to the key's announcements.
func (r *Room) Hears(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := r.keys[key]
	return ks != nil && len(ks.queue) > 0 && ks.listening && r.heard(ks)
}

// Confirmed returns how many nodes confirm the subscription to key's
// announcements, since each one's last gap (0 if the room does not listen
// to it).
func (r *Room) Confirmed(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	if ks := r.keys[key]; ks != nil {
		for _, ok := range ks.confirmed {
			if ok {
				n++
			}
		}
	}
	return n
}
