package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// errWaitedOut is what every adapter returns when the lock stayed taken for
// the whole wait (or, with wait == 0, on the one try): the expected failure
// under contention, counted rather than treated as a broken run.
var errWaitedOut = errors.New("bench: lock not obtained within the wait")

// impl adapts one lock implementation to what the benchmarks need.
type impl struct {
	name string
	// lock takes key for ttl. With wait == 0 it tries once; otherwise it
	// waits up to wait using the implementation's own waiting strategy.
	// It returns the release of that one acquisition.
	lock func(ctx context.Context, key string, ttl, wait time.Duration) (release func(context.Context) error, err error)
	// close frees what the implementation holds (dlock's pub/sub, if any).
	close func()
}

// Retry strategies of the peers, as their documentation describes them.
const (
	// redislock: ExponentialBackoff(min, max) doubles from 4 ms; its doc
	// comment recommends a minimum of no less than 16 ms.
	redislockMinBackoff = 16 * time.Millisecond
	redislockMaxBackoff = 256 * time.Millisecond
	// redsync: the default delay between tries, a uniform random 50–250 ms
	// (unexported in redsync, restated here only to size WithTries).
	redsyncMinDelay = 50 * time.Millisecond
)

// luaImpls returns this package's lua lock and bsm/redislock on node 0.
func luaImpls(nodes []*redis.Client) []impl {
	return []impl{dlockImpl("dlock", dlock.NewLua(nodes[0])), redislockImpl(nodes[0])}
}

// redlockImpls returns this package's Redlock and redsync on all five nodes.
func redlockImpls(nodes []*redis.Client) []impl {
	return []impl{dlockImpl("dlock", dlock.NewRedlock(nodes)), redsyncImpl(nodes)}
}

// locker is what dlock.Lua and dlock.Redlock both offer.
type locker interface {
	dlock.Locker
	Close() error
}

func dlockImpl(name string, l locker) impl {
	return impl{
		name: name,
		lock: func(ctx context.Context, key string, ttl, wait time.Duration) (func(context.Context) error, error) {
			var lk *dlock.Lock
			var err error
			if wait == 0 {
				lk, err = l.TryLock(ctx, key, ttl)
			} else {
				lk, err = l.Lock(ctx, key, ttl, wait)
			}
			switch {
			case errors.Is(err, dlock.ErrNotObtained), errors.Is(err, dlock.ErrTimeout):
				return nil, fmt.Errorf("%w: %w", errWaitedOut, err)
			case err != nil:
				return nil, err
			}
			return lk.Release, nil
		},
		close: func() { _ = l.Close() },
	}
}

// redislockImpl: Obtain with no options tries once (its default, NoRetry);
// waiting uses a fresh ExponentialBackoff per Obtain (the strategy counts its
// tries, so it must not be shared) bounded by a context deadline, which is
// how redislock expresses a maximum wait.
func redislockImpl(node *redis.Client) impl {
	c := redislock.New(node)
	return impl{
		name: "redislock",
		lock: func(ctx context.Context, key string, ttl, wait time.Duration) (func(context.Context) error, error) {
			var opt *redislock.Options
			if wait > 0 {
				opt = &redislock.Options{RetryStrategy: redislock.ExponentialBackoff(redislockMinBackoff, redislockMaxBackoff)}
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, wait)
				defer cancel()
			}
			lk, err := c.Obtain(ctx, key, ttl, opt)
			switch {
			case errors.Is(err, redislock.ErrNotObtained), errors.Is(err, context.DeadlineExceeded):
				return nil, fmt.Errorf("%w: %w", errWaitedOut, err)
			case err != nil:
				return nil, err
			}
			return lk.Release, nil
		},
		close: func() {},
	}
}

// redsyncImpl: a fresh Mutex per acquisition, since a redsync Mutex keeps the
// token of its one acquisition inside itself. TryLockContext tries once;
// LockContext waits with redsync's default delay (random 50–250 ms between
// tries) and enough tries that the context deadline, not the try count,
// bounds the wait.
func redsyncImpl(nodes []*redis.Client) impl {
	pools := make([]redsyncredis.Pool, len(nodes))
	for i, c := range nodes {
		pools[i] = goredis.NewPool(c)
	}
	rs := redsync.New(pools...)
	return impl{
		name: "redsync",
		lock: func(ctx context.Context, key string, ttl, wait time.Duration) (func(context.Context) error, error) {
			var err error
			var m *redsync.Mutex
			if wait == 0 {
				m = rs.NewMutex(key, redsync.WithExpiry(ttl))
				err = m.TryLockContext(ctx)
			} else {
				m = rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(int(wait/redsyncMinDelay)+1))
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, wait)
				defer cancel()
				err = m.LockContext(ctx)
			}
			var taken *redsync.ErrTaken
			var nodeTaken *redsync.ErrNodeTaken
			switch {
			case errors.Is(err, redsync.ErrFailed), errors.As(err, &taken), errors.As(err, &nodeTaken):
				return nil, fmt.Errorf("%w: %w", errWaitedOut, err)
			case err != nil:
				return nil, err
			}
			return func(ctx context.Context) error {
				ok, err := m.UnlockContext(ctx)
				if err == nil && !ok {
					err = errors.New("redsync: unlock found the lock on no quorum")
				}
				return err
			}, nil
		},
		close: func() {},
	}
}
