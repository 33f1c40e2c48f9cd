package dlock

import (
	"context"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
)

// CrashBetweenSetNXAndExpire makes n's TryLock stop after a successful
// SETNX and before the EXPIRE whenever crash returns an error, as if the
// process had died there: TryLock then returns that error wrapped, and the
// key stays without a TTL. Set it before n's first use.
func (n *Naive) CrashBetweenSetNXAndExpire(crash func(ctx context.Context, key string) error) {
	n.crash = crash
}

// Queued returns how many of l's goroutines wait for key in its waiting
// room (the head among them); l is a waiting locker (naive, lua, fenced,
// redlock, or InTurns of one).
func Queued(l any, key string) int { return roomOf(l).Queued(key) }

// Hears reports whether a goroutine of l waits for key and will hear its
// next release: a waiter is queued, and a quorum of the nodes confirm the
// subscription to the key's announcements. A release from then on wakes
// the head at once (the tests that time a wake-up wait for this first).
func Hears(l any, key string) bool { return roomOf(l).Hears(key) }

// Confirmed returns how many nodes confirm l's subscription to key's
// announcements, since each one's last gap (0 if l does not listen to it).
func Confirmed(l any, key string) int { return roomOf(l).Confirmed(key) }

func roomOf(l any) *waitroom.Room {
	switch m := l.(type) {
	case *Lua:
		return m.room
	case inTurns:
		return m.room
	case *Naive:
		return m.room
	case *Redlock:
		return m.room
	}
	panic("dlock: no waiting room in this locker")
}

// RunsAs returns the SHA1s of the scripts that run script file (under
// scripts/) around it: the waiting room's turns, for lua and fenced.
func RunsAs(file string) []string {
	acquire, release := turns.Hashes()
	switch file {
	case "acquire.lua":
		return []string{acquire}
	case "release.lua":
		return []string{release}
	}
	return nil
}
