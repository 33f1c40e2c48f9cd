package faultproxy

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestSleepUntilNeverWakesEarly: many waits at once, in random order, each
// ends at or after its own due time, and every one ends.
func TestSleepUntilNeverWakesEarly(t *testing.T) {
	const n = 200
	start := time.Now()
	early := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		due := start.Add(time.Duration(rand.IntN(5000)) * time.Microsecond)
		wg.Go(func() {
			if !sleepUntil(due, nil) {
				early <- "returned false with no done channel"
				return
			}
			if now := time.Now(); now.Before(due) {
				early <- fmt.Sprintf("woke %v before its due time", due.Sub(now))
			}
		})
	}
	wg.Wait()
	close(early)
	for e := range early {
		t.Error(e)
	}
}

// TestSleepUntilStopsWhenDone: a wait far off ends at once when done
// closes, reports false, and leaves nothing queued on the clock.
func TestSleepUntilStopsWhenDone(t *testing.T) {
	done := make(chan struct{})
	ended := make(chan bool)
	go func() { ended <- sleepUntil(time.Now().Add(time.Hour), done) }()
	close(done)
	select {
	case ok := <-ended:
		if ok {
			t.Error("sleepUntil = true after done closed, want false")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sleepUntil still waiting 5 s after done closed")
	}
	if c := preciseClock(); c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, w := range c.q {
			if w.due.After(time.Now().Add(time.Minute)) {
				t.Errorf("a cancelled wait is still queued (due %v)", w.due)
			}
		}
	}
}

// TestDelayLineUnderAMillisecond: a round trip through a proxy delayed
// 250 µs each way takes about half a millisecond, not the two Go's timers
// would round it up to (each wait about 1.1 ms on an idle process). The
// median of 20 round trips is taken, up to three times, so that a burst of
// load elsewhere on the machine does not fail it.
func TestDelayLineUnderAMillisecond(t *testing.T) {
	if preciseClock() == nil {
		t.Skip("no timerfd here: the delay line waits on Go's timers")
	}
	p := newTestProxy(t)
	p.SetDelay(250 * time.Microsecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	var medians []time.Duration
	for range 3 {
		took := make([]time.Duration, 20)
		for i := range took {
			t0 := time.Now()
			if _, err := c.Write([]byte("ping\n")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			took[i] = time.Since(t0)
		}
		slices.Sort(took)
		if took[0] < 500*time.Microsecond {
			t.Fatalf("a round trip through 250 µs each way took %v, want at least 500 µs", took[0])
		}
		if m := took[len(took)/2]; m < 2*time.Millisecond {
			return
		} else {
			medians = append(medians, m)
		}
	}
	t.Errorf("round trips through 250 µs each way: medians %v, want one under 2 ms", medians)
}
