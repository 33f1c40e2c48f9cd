package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/etcdlock"
)

// The etcd cluster the etcd mode runs on: the three members named by
// FLASHSALE_BENCH_ETCD_ENDPOINTS (or FLASHSALE_TEST_ETCD_ENDPOINTS), or an
// embedded three-member cluster.
var etcdEndpoints []string

// startEtcd sets etcdEndpoints, starting an embedded cluster if the
// environment names none; stop ends it.
func startEtcd() (kind string, stop func(), err error) {
	for _, env := range []string{"FLASHSALE_BENCH_ETCD_ENDPOINTS", "FLASHSALE_TEST_ETCD_ENDPOINTS"} {
		for _, e := range strings.Split(os.Getenv(env), ",") {
			if e = strings.TrimSpace(e); e != "" {
				etcdEndpoints = append(etcdEndpoints, e)
			}
		}
		if len(etcdEndpoints) > 0 {
			return "real", func() {}, nil
		}
	}
	e, err := embedded.StartEtcd(3)
	if err != nil {
		return "", nil, err
	}
	etcdEndpoints = e.Endpoints()
	return "embedded", e.Close, nil
}

// newEtcdClient returns a client of its own, as another process would have.
func newEtcdClient() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: etcdEndpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// etcdImpls returns this package's etcd lock and etcd's own
// concurrency.Mutex on one fresh client (the Redis nodes are not used);
// closing either closes the client.
func etcdImpls([]*redis.Client) []impl {
	c, err := newEtcdClient()
	if err != nil {
		panic(fmt.Sprintf("bench: etcd client: %v", err))
	}
	var once sync.Once
	closeClient := func() { once.Do(func() { c.Close() }) }
	d := dlockImpl("dlock", etcdlock.New(c))
	d.close = closeClient
	return []impl{d, etcdMutexImpl(c, closeClient)}
}

// etcdMutexImpl: a fresh session (a lease, kept alive by the session's own
// stream) and Mutex per acquisition, as dlock grants a lease per
// acquisition; Unlock, then closing the session, releases. TryLock tries
// once; Lock waits in the queue until the context deadline.
func etcdMutexImpl(c *clientv3.Client, closeClient func()) impl {
	return impl{
		name: "concurrency",
		lock: func(ctx context.Context, key string, ttl, wait time.Duration) (func(context.Context) error, error) {
			s, err := concurrency.NewSession(c, concurrency.WithTTL(int((ttl+time.Second-1)/time.Second)))
			if err != nil {
				return nil, err
			}
			m := concurrency.NewMutex(s, key)
			if wait == 0 {
				err = m.TryLock(ctx)
			} else {
				wctx, cancel := context.WithTimeout(ctx, wait)
				err = m.Lock(wctx)
				cancel()
			}
			switch {
			case errors.Is(err, concurrency.ErrLocked), errors.Is(err, context.DeadlineExceeded):
				s.Close()
				return nil, fmt.Errorf("%w: %w", errWaitedOut, err)
			case err != nil:
				s.Close()
				return nil, err
			}
			return func(ctx context.Context) error {
				err := m.Unlock(ctx)
				return errors.Join(err, s.Close())
			}, nil
		},
		close: closeClient,
	}
}

// etcdLeftovers counts the queue keys left under key on the etcd cluster.
func etcdLeftovers(ctx context.Context, key string) (int, error) {
	c, err := newEtcdClient()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	resp, err := c.Get(ctx, key+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return int(resp.Count), nil
}
