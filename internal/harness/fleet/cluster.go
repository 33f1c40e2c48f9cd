package fleet

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
)

// startCluster starts a Redis Cluster for StartCluster, its files in
// logDir/redis-cluster or a temporary folder, with nodeTimeout (zero:
// redisproc's default), and waits up to a minute for it to be healthy.
// The function it returns closes the cluster and removes a temporary
// folder.
func startCluster(ctx context.Context, logDir string, nodeTimeout time.Duration) (*redisproc.Cluster, func() error, error) {
	dir, remove, err := filesDir(logDir, "redis-cluster", "flashsale-cluster-")
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := redisproc.StartCluster(ctx, redisproc.ClusterConfig{Dir: dir, NodeTimeout: nodeTimeout})
	if err != nil {
		remove()
		return nil, nil, err
	}
	return c, func() error { c.Close(); return remove() }, nil
}

// filesDir makes the folder a fleet's servers keep their files in:
// logDir/sub, or, without a logDir, a temporary folder named from
// tmpPrefix, which the function it returns removes (for logDir/sub it
// does nothing).
func filesDir(logDir, sub, tmpPrefix string) (dir string, remove func() error, err error) {
	if logDir == "" {
		tmp, err := os.MkdirTemp("", tmpPrefix)
		if err != nil {
			return "", nil, err
		}
		return tmp, func() error { return os.RemoveAll(tmp) }, nil
	}
	dir = filepath.Join(logDir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	return dir, func() error { return nil }, nil
}
