package dlock

import (
	"context"
	"time"
)

// Off is the mode without a lock: TryLock and Lock always return a handle
// at once, so the demo shows concurrent buyers overselling. Off is safe for
// concurrent use.
type Off struct{}

// NewOff returns the locker that does not lock.
func NewOff() *Off { return &Off{} }

// TryLock never blocks and never fails: it returns a handle whose Release
// does nothing but cancel the handle's context.
func (*Off) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	return newLock(ctx, key, "", ttl, time.Now().Add(ttl), offHolder{}, false), nil
}

// Lock is TryLock: there is never anything to wait for.
func (o *Off) Lock(ctx context.Context, key string, ttl, _ time.Duration) (*Lock, error) {
	return o.TryLock(ctx, key, ttl)
}

// Close does nothing and returns nil.
func (*Off) Close() error { return nil }

// offHolder refreshes and releases nothing.
type offHolder struct{}

func (offHolder) refresh(_ context.Context, _ *Lock, ttl time.Duration) (time.Duration, error) {
	return ttl, nil
}

func (offHolder) release(context.Context, *Lock, bool) (bool, error) { return false, nil }
