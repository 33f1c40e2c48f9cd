package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
)

// exampleRedis starts n in-process Redis servers for the examples, with
// TTLs running on the wall clock as on a real server, and returns a client
// for each and a func that stops them all.
func exampleRedis(n int) ([]*redis.Client, func()) {
	var clients []*redis.Client
	var servers []*miniredis.Miniredis
	for range n {
		s := miniredis.NewMiniRedis()
		s.ClockTTL(true)
		if err := s.Start(); err != nil {
			panic(err)
		}
		servers = append(servers, s)
		clients = append(clients, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	}
	return clients, func() {
		for i := range servers {
			_ = clients[i].Close()
			servers[i].Close()
		}
	}
}

// The off mode never blocks and never fails, so two buyers can be "inside"
// at once: the oversell the demo starts with.
func ExampleNewOff() {
	ctx := context.Background()
	locker := dlock.NewOff()

	first, _ := locker.TryLock(ctx, "flashsale:lock:product:p1", time.Second)
	second, err := locker.TryLock(ctx, "flashsale:lock:product:p1", time.Second)
	fmt.Println("second buyer let in too:", err == nil)

	_ = first.Release(ctx)
	_ = second.Release(ctx)
	// Output:
	// second buyer let in too: true
}

// A naive lock keeps others out while its TTL lasts, but nothing renews
// it, and its DEL would delete whoever's lock is there.
func ExampleNewNaive() {
	nodes, stop := exampleRedis(1)
	defer stop()
	ctx := context.Background()
	locker := dlock.NewNaive(nodes[0])
	defer locker.Close()

	lock, err := locker.TryLock(ctx, "flashsale:lock:product:p1", 100*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = locker.TryLock(ctx, "flashsale:lock:product:p1", 100*time.Millisecond)
	fmt.Println("second buyer kept out:", errors.Is(err, dlock.ErrNotObtained))
	fmt.Println("token:", lock.Token())
	fmt.Println("refresh:", errors.Is(lock.Refresh(ctx, time.Second), errors.ErrUnsupported))
	fmt.Println("release:", lock.Release(ctx))
	// Output:
	// second buyer kept out: true
	// token: 1
	// refresh: true
	// release: <nil>
}

// The lua lock: wait for the key, do the work under the lock's context
// (the watchdog renews the lock meanwhile), release once.
func ExampleNewLua() {
	nodes, stop := exampleRedis(1)
	defer stop()
	ctx := context.Background()
	locker := dlock.NewLua(nodes[0])
	defer locker.Close()

	lock, err := locker.Lock(ctx, "flashsale:lock:product:p1", 300*time.Millisecond, 2*time.Second)
	if err != nil {
		fmt.Println(err) // dlock.ErrTimeout or dlock.ErrUnavailable
		return
	}
	work := lock.Context() // cancelled if the lock is lost: stop writing then
	time.Sleep(400 * time.Millisecond)
	fmt.Println("still held after more than the TTL:", work.Err() == nil)

	_, err = locker.TryLock(ctx, "flashsale:lock:product:p1", time.Second)
	fmt.Println("another buyer kept out:", errors.Is(err, dlock.ErrNotObtained))
	fmt.Println("release:", lock.Release(ctx))
	fmt.Println("release again:", errors.Is(lock.Release(ctx), dlock.ErrNotHeld))
	// Output:
	// still held after more than the TTL: true
	// another buyer kept out: true
	// release: <nil>
	// release again: true
}

// Redlock on five nodes keeps working with two of them down.
func ExampleNewRedlock() {
	nodes, stop := exampleRedis(5)
	defer stop()
	ctx := context.Background()
	locker := dlock.NewRedlock(nodes)
	defer locker.Close()

	_ = nodes[3].Close() // two nodes unreachable: a majority is still there
	_ = nodes[4].Close()
	lock, err := locker.TryLock(ctx, "flashsale:lock:product:p1", time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("validity under the TTL:", lock.Validity() < time.Second)
	fmt.Println("release:", lock.Release(ctx))
	// Output:
	// validity under the TTL: true
	// release: <nil>
}

// A fenced lock hands each grant of a key a larger fence. The store the
// work writes to keeps the highest fence it has seen and refuses an older
// one, so a holder whose lock ran out unnoticed (here its renewals are held
// back, as by a stalled network) cannot commit over the holder after it.
func ExampleNewFenced() {
	nodes, stop := exampleRedis(1)
	defer stop()
	ctx := context.Background()
	locker := dlock.NewFenced(nodes[0])
	defer locker.Close()

	var highest int64 // the store's side of fencing
	write := func(fence int64) error {
		if fence < highest {
			return fmt.Errorf("refused: fence %d is older than %d", fence, highest)
		}
		highest = fence
		return nil
	}

	first, err := locker.TryLock(ctx, "flashsale:lock:product:p1", 100*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	first.HoldRenewals(time.Second) // its network stalls: the lock runs out
	second, err := locker.Lock(ctx, "flashsale:lock:product:p1", time.Second, 2*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Release(ctx)
	<-first.Context().Done()
	fmt.Println("fences:", first.Fence(), second.Fence())
	fmt.Println("second writes:", write(second.Fence()))
	fmt.Println("first writes late:", write(first.Fence()))
	fmt.Println("first lost its lock:", errors.Is(context.Cause(first.Context()), dlock.ErrNotHeld))
	// Output:
	// fences: 1 2
	// second writes: <nil>
	// first writes late: refused: fence 1 is older than 2
	// first lost its lock: true
}

// New picks the locker from a mode name parsed once, at start-up.
func ExampleNew() {
	nodes, stop := exampleRedis(5)
	defer stop()
	ctx := context.Background()

	mode, err := dlock.ParseMode("redlock")
	if err != nil {
		fmt.Println(err)
		return
	}
	locker, err := dlock.New(mode, nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locker.Close()

	lock, err := locker.Lock(ctx, "flashsale:lock:product:p1", time.Second, time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Release(ctx)
	fmt.Println("locked", lock.Key())

	_, err = dlock.ParseMode("spin")
	fmt.Println(err)
	// Output:
	// locked flashsale:lock:product:p1
	// dlock: unknown lock mode "spin" (want off, naive, lua, redlock or fenced)
}
