package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
)

// startSentinels starts a Sentinel set for StartSentinels, its files in
// logDir/redis or a temporary folder, and waits up to a minute for the
// Sentinels to agree. The function it returns closes the set and removes
// a temporary folder.
func startSentinels(ctx context.Context, logDir string) (*redisproc.Set, func() error, error) {
	if _, _, err := redisproc.Binaries(); err != nil {
		return nil, nil, err // before any folder is made
	}
	dir, remove, err := filesDir(logDir, "redis", "flashsale-sentinels-")
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	set, err := redisproc.StartSet(ctx, dir)
	if err != nil {
		remove()
		return nil, nil, err
	}
	return set, func() error { set.Close(); return remove() }, nil
}

// describeBackends says in a few words what the shops run on, and whether
// they reach the Redis nodes through the fleet's proxies.
func describeBackends(b *app.Backends, proxied bool) string {
	db := "MySQL"
	if b.SQLite != nil {
		db = "embedded SQLite"
	}
	redis := fmt.Sprintf("%d Redis nodes", len(b.RedisAddrs))
	if b.Embedded != nil {
		redis = fmt.Sprintf("%d embedded miniredis nodes", len(b.RedisAddrs))
	}
	etcd := fmt.Sprintf("etcd at %s", strings.Join(b.EtcdEndpoints, ","))
	if b.EmbeddedEtcd != nil {
		etcd = fmt.Sprintf("a %d-member embedded etcd cluster", b.EmbeddedEtcd.Len())
	}
	via := ""
	if proxied {
		via = " behind the load generator's proxies"
	}
	return db + " + " + redis + " (" + strings.Join(b.RedisAddrs, ",") + ")" + via + " + " + etcd
}
