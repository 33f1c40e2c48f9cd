package waitroom

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The sweeper of idle keys and a waiter that comes back for the key it
// sweeps reach the subscriber in the order the key's state saw them: if the
// waiter's fresh state says it listens, the subscriber is subscribed, and
// stays so. Were the sweeper to unsubscribe after letting go of the room's
// mutex, a waiter could create fresh state and subscribe in between, and
// the late unsubscription would leave it deaf: its head would sleep until
// the holder's TTL after every release. (A white-box test: the window is a
// few instructions wide, too narrow to hit reliably through Lock.)
func TestSweepRacingListenStaysSubscribed(t *testing.T) {
	// The subscriber is never started: its (un)subscriptions queue up in
	// order, which is what is checked. No connection is made.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	const key = "k"
	for i := range 2000 {
		r := New([]redis.UniversalClient{c}, 1)
		// A key listened to, idle long enough to be swept.
		ks, turn := r.join(key)
		r.listen(key, ks)
		r.leave(key, ks, turn)
		r.mu.Lock()
		ks.idle = time.Now().Add(-2 * keepIdle)
		r.mu.Unlock()

		var wg sync.WaitGroup
		wg.Go(func() { r.sweepIdle(time.Now()) })
		wg.Go(func() { // a waiter comes back and fails to get the key
			ks, turn := r.join(key)
			r.listen(key, ks)
			r.leave(key, ks, turn)
		})
		wg.Wait()

		r.mu.Lock()
		listening := r.keys[key] != nil && r.keys[key].listening
		r.mu.Unlock()
		if subscribed := r.sub.Listening(key); listening != subscribed {
			t.Fatalf("try %d: the key's state says listening=%v, the subscriber ends subscribed=%v",
				i, listening, subscribed)
		}
	}
}
