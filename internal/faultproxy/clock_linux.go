package faultproxy

import (
	"container/heap"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// precise is the delay line's clock on Linux: one timerfd for the whole
// process, armed for the earliest wait, read by one goroutine in Go's
// poller. Go's own timers wake an idle process on a millisecond grid, so a
// 0.5 ms delay would last about 1.1 ms and a 1 ms round trip about 2.4 ms;
// the kernel wakes the poller when a timerfd expires, within tens of
// microseconds. Safe for concurrent use.
type precise struct {
	fd int
	f  *os.File

	mu    sync.Mutex
	q     waiters   // by due, earliest first
	armed time.Time // when the timerfd fires; zero when disarmed
}

var (
	clockOnce sync.Once
	clock     *precise // nil when no timerfd could be made
)

// preciseClock returns the process's clock, started on first use, or nil
// if the kernel gave no timerfd.
func preciseClock() *precise {
	clockOnce.Do(func() {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			return
		}
		clock = &precise{fd: fd, f: os.NewFile(uintptr(fd), "faultproxy-clock")}
		go clock.run()
	})
	return clock
}

// waiter is one sleepUntil in the queue.
type waiter struct {
	due  time.Time
	wake chan struct{}
	i    int // index in the heap; -1 once out of it
}

// sleepUntil waits until due; false if done closed first.
func (c *precise) sleepUntil(due time.Time, done <-chan struct{}) bool {
	w := &waiter{due: due, wake: make(chan struct{})}
	c.mu.Lock()
	heap.Push(&c.q, w)
	if c.armed.IsZero() || due.Before(c.armed) {
		c.arm(due)
	}
	c.mu.Unlock()
	select {
	case <-w.wake:
		return true
	case <-done:
		c.mu.Lock()
		if w.i >= 0 {
			heap.Remove(&c.q, w.i)
		}
		c.mu.Unlock()
		return false
	}
}

// run wakes the waiters whose time has come, each time the timerfd fires,
// and arms it for the next. It runs for the life of the process.
func (c *precise) run() {
	buf := make([]byte, 8)
	for {
		if _, err := c.f.Read(buf); err != nil {
			return // the kernel's timerfd failed: waits fall back to nothing; never seen
		}
		c.mu.Lock()
		c.armed = time.Time{}
		now := time.Now()
		for len(c.q) > 0 && !c.q[0].due.After(now) {
			close(heap.Pop(&c.q).(*waiter).wake)
		}
		if len(c.q) > 0 {
			c.arm(c.q[0].due)
		}
		c.mu.Unlock()
	}
}

// arm sets the timerfd to fire at due (at once if due has passed). The
// caller holds c.mu. Re-arming drops an expiry not yet read; run re-arms
// for the earliest waiter after each read, so none is lost.
func (c *precise) arm(due time.Time) {
	d := max(time.Until(due), time.Nanosecond)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(c.fd, 0, &spec, nil); err != nil {
		// Never seen: wake everyone rather than strand them.
		for len(c.q) > 0 {
			close(heap.Pop(&c.q).(*waiter).wake)
		}
		return
	}
	c.armed = due
}

// waiters is a min-heap of waiters by due (container/heap).
type waiters []*waiter

func (q waiters) Len() int           { return len(q) }
func (q waiters) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q waiters) Swap(i, j int)      { q[i], q[j] = q[j], q[i]; q[i].i = i; q[j].i = j }
func (q *waiters) Push(x any)        { w := x.(*waiter); w.i = len(*q); *q = append(*q, w) }
func (q *waiters) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	w.i = -1
	return w
}
