package dlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock/waitroom"
	"github.com/redis/go-redis/v9"
)

// naiveValue is every naive holder's value: nothing tells holders apart.
const naiveValue = "1"

// Naive is the textbook lock that looks right and is not: SETNX, then
// PEXPIRE, as two commands; a constant value; a fixed TTL; release by a
// plain DEL. It fails two ways: work that outlasts the TTL lets a second
// buyer in, whose lock the first buyer's DEL then deletes; and a process
// that dies between SETNX and PEXPIRE leaves a key that never expires.
// Lock and Close come from waiting (wait.go). Safe for concurrent use.
type Naive struct {
	*waiting
	client redis.UniversalClient
	crash  func(ctx context.Context, key string) error // tests only: export_test.go
}

// NewNaive returns a naive locker on c, which must not be nil and stays the
// caller's to close.
func NewNaive(c redis.UniversalClient) *Naive {
	n := &Naive{client: c}
	n.waiting = newWaiting([]redis.UniversalClient{c}, 1, n.try)
	return n
}

// TryLock makes one attempt: SETNX key "1", then PEXPIRE key ttl. It
// returns ErrNotObtained if the key exists (whoever set it, and even if it
// will never expire) and ErrUnavailable if Redis cannot be reached.
func (n *Naive) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	if err := CheckTTL(ttl); err != nil {
		return nil, err
	}
	start := time.Now()
	set, err := n.client.Do(ctx, "SETNX", key, naiveValue).Int64()
	if err != nil {
		return nil, redisErr(ctx, err, "SETNX", key)
	}
	if set == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNotObtained, key)
	}
	// The flaw: between these two commands the key exists with no TTL. If
	// the process dies here, nobody ever gets the lock again.
	if n.crash != nil {
		if err := n.crash(ctx, key); err != nil {
			return nil, fmt.Errorf("dlock: naive %q: stopped between SETNX and EXPIRE: %w", key, err)
		}
	}
	// PEXPIRE is EXPIRE in milliseconds, so that demos can use short TTLs.
	// If it fails, the key stays without a TTL: the same flaw.
	if err := n.client.PExpire(ctx, key, ttl).Err(); err != nil {
		return nil, redisErr(ctx, err, "EXPIRE", key)
	}
	return newLock(ctx, key, naiveValue, ttl, start.Add(ttl), n, false), nil
}

// try is TryLock for the waiting room (wait.go); a held key is retried.
func (n *Naive) try(ctx context.Context, key string, ttl time.Duration, _ waitroom.Asker) (*Lock, waitroom.Retry, error) {
	l, err := n.TryLock(ctx, key, ttl)
	return l, waitroom.Retry{Held: errors.Is(err, ErrNotObtained)}, err
}

// refresh refuses: a naive lock has a fixed TTL, and with no owner token an
// EXPIRE could just as well extend someone else's lock.
func (n *Naive) refresh(_ context.Context, l *Lock, _ time.Duration) (time.Duration, error) {
	return 0, fmt.Errorf("dlock: naive lock %q cannot be refreshed: %w", l.key, errors.ErrUnsupported)
}

// release is the flaw: DEL deletes the key whoever holds it now, announced
// in the same round trip unless quiet. ErrNotHeld if the key was gone.
func (n *Naive) release(ctx context.Context, l *Lock, quiet bool) (announced bool, _ error) {
	pipe := n.client.Pipeline()
	del := pipe.Del(ctx, l.key)
	if !quiet {
		pipe.Publish(ctx, waitroom.Channel(l.key), naiveValue)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, redisErr(ctx, err, "DEL", l.key)
	}
	if del.Val() == 0 {
		return false, notHeld(l.key, "had already expired")
	}
	return !quiet, nil
}
