package httpapi

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shedCounter is a DoorObserver that counts TurnedAway by reason.
type shedCounter struct {
	mu   sync.Mutex
	shed map[string]int
}

func (c *shedCounter) Queued(int)   {}
func (c *shedCounter) InFlight(int) {}
func (c *shedCounter) TurnedAway(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shed == nil {
		c.shed = map[string]int{}
	}
	c.shed[reason]++
}

func (c *shedCounter) count(reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shed[reason]
}

// TestDoorShedsWhatItCannotServe: with its slot taken and orders holding
// it 2 s on average, a door whose wait is 1 s turns the next order away
// at once (it would wait 2 s, past half the wait), with a Retry-After of
// the difference, 1.5 s, in whole seconds; one
// whose orders hold it 100 ms lets the next order wait, and admits it
// when the slot comes free.
func TestDoorShedsWhatItCannotServe(t *testing.T) {
	t.Run("longer than the wait", func(t *testing.T) {
		obs := &shedCounter{}
		a := newAdmission(1, time.Second, obs)
		a.hold.Add(2 * time.Second)
		leave, err := a.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer leave()

		start := time.Now()
		_, err = a.enter(context.Background())
		var busy *busyError
		if !errors.As(err, &busy) || !errors.Is(err, errBusy) {
			t.Fatalf("second order: got %v, want a busyError wrapping errBusy", err)
		}
		if took := time.Since(start); took >= 500*time.Millisecond {
			t.Errorf("second order turned away after %v, want at once", took)
		}
		if got, want := busy.RetryAfter(), "2"; got != want {
			t.Errorf("Retry-After = %q, want %q", got, want)
		}
		if got := obs.count(ShedQueueFull); got != 1 {
			t.Errorf("TurnedAway(%s) = %d, want 1", ShedQueueFull, got)
		}
	})

	t.Run("within the wait", func(t *testing.T) {
		obs := &shedCounter{}
		a := newAdmission(1, 5*time.Second, obs)
		a.hold.Add(100 * time.Millisecond)
		leave, err := a.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		entered := make(chan error, 1)
		go func() {
			l, err := a.enter(context.Background())
			if err == nil {
				l()
			}
			entered <- err
		}()
		for a.queued.Load() == 0 { // waits on the condition, not a clock
			time.Sleep(time.Millisecond)
		}
		leave()
		if err := <-entered; err != nil {
			t.Errorf("second order, once the slot was free: %v", err)
		}
		if got := obs.count(ShedQueueFull) + obs.count(ShedWaitExpired); got != 0 {
			t.Errorf("orders turned away: %d, want 0", got)
		}
	})

	t.Run("no average yet", func(t *testing.T) {
		obs := &shedCounter{}
		a := newAdmission(1, 20*time.Millisecond, obs)
		leave, err := a.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
		if _, err := a.enter(context.Background()); !errors.Is(err, errBusy) {
			t.Fatalf("second order: got %v, want errBusy after the wait", err)
		}
		if got := obs.count(ShedWaitExpired); got != 1 {
			t.Errorf("TurnedAway(%s) = %d, want 1", ShedWaitExpired, got)
		}
	})
}

// TestRetryAfterRoundsUp: the door's Retry-After is whole seconds, at
// least 1.
func TestRetryAfterRoundsUp(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "1"}, {time.Millisecond, "1"}, {time.Second, "1"}, {1001 * time.Millisecond, "2"}, {3 * time.Second, "3"}} {
		if got := (&busyError{retryAfter: c.d}).RetryAfter(); got != c.want {
			t.Errorf("RetryAfter for %v = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestDoorQueueBoundHoldsForACrowd: buyers who arrive together must each
// see the others ahead of them, or they all read the same length and all
// join. With one slot, taken, orders holding
// it 400 ms on average and a wait of 1 s, the door lets one order queue
// ((0+1) × 400 ms ≤ 500 ms; a second would wait 800 ms): of a crowd of
// 200 that arrives at once, all but one must be shed at once, and only
// that one gets in when the slot comes free.
func TestDoorQueueBoundHoldsForACrowd(t *testing.T) {
	for round := range 30 {
		a := newAdmission(1, time.Second, nil)
		a.hold.Add(400 * time.Millisecond)
		leave, err := a.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		var shed, in atomic.Int64
		var wg sync.WaitGroup
		for range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				l, err := a.enter(context.Background())
				if err != nil {
					shed.Add(1)
					return
				}
				in.Add(1)
				l()
			}()
		}
		close(start)
		// A buyer is counted into the queue before the door judges it, so
		// one about to be shed may still be counted: wait until every
		// buyer is shed or queued and the queue is within its bound, and
		// give a door that keeps more queued a few seconds to show it.
		deadline := time.Now().Add(5 * time.Second)
		for (shed.Load()+a.queued.Load() < 200 || a.queued.Load() > 1) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		queued := a.queued.Load()
		leave()
		wg.Wait()
		if queued > 1 || in.Load() > 1 {
			t.Fatalf("round %d: %d queued behind the one slot, %d got in after it: the bound is 1", round+1, queued, in.Load())
		}
	}
}

// TestDoorRecoversFromAStaleAverage: the estimate is asked only when
// every slot is taken, so with a free slot an order enters whatever the
// average, and each that leaves pulls the average toward what orders hold
// now. After 300 ms stalls, a slot of 8 and a wait of 1 s, fast orders
// (1 ms) bring the queue bound back to 100 within a few dozen orders.
func TestDoorRecoversFromAStaleAverage(t *testing.T) {
	a := newAdmission(8, time.Second, nil)
	for range 50 {
		a.hold.Add(300 * time.Millisecond)
	}
	if est, _ := a.waitFor(100); est <= 500*time.Millisecond {
		t.Fatalf("after the stalls, a queue of 100 is estimated %v: want it refused", est)
	}
	a.hold.Add(10 * time.Second) // and one order stuck for 10 s
	orders := 0
	for ; orders < 1000; orders++ {
		if est, _ := a.waitFor(100); est <= 500*time.Millisecond {
			break
		}
		leave, err := a.enter(context.Background()) // the slots are free
		if err != nil {
			t.Fatalf("order %d at a door with free slots: %v", orders, err)
		}
		time.Sleep(time.Millisecond)
		leave()
	}
	t.Logf("fast orders until a queue of 100 is let wait again: %d (average %v)", orders, a.hold.Get())
	if orders > 64 {
		t.Errorf("%d fast orders to recover, want a few dozen", orders)
	}
}
