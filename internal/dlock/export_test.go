package dlock

import "context"

// CrashBetweenSetNXAndExpire makes n's TryLock stop after a successful
// SETNX and before the EXPIRE whenever crash returns an error, as if the
// process had died there: TryLock then returns that error wrapped, and the
// key stays without a TTL. Set it before n's first use.
func (n *Naive) CrashBetweenSetNXAndExpire(crash func(ctx context.Context, key string) error) {
	n.crash = crash
}
