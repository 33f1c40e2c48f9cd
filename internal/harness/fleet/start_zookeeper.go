package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

// startZooKeeper starts a three-member ZooKeeper ensemble of Debian's
// zookeeper (package zkproc), its files in dir/zookeeper (a temporary
// folder without dir), and returns it and a closer that stops it and
// removes a temporary folder. It returns an error wrapping
// zkproc.ErrMissingBinaries without java or the package.
func startZooKeeper(ctx context.Context, dir string) (*zkproc.Ensemble, func() error, error) {
	temp := dir == ""
	zkDir := filepath.Join(dir, "zookeeper")
	if temp {
		var err error
		if zkDir, err = os.MkdirTemp("", "flashsale-zookeeper-"); err != nil {
			return nil, nil, fmt.Errorf("fleet: zookeeper folder: %w", err)
		}
	}
	e, err := zkproc.Start(ctx, zkproc.Config{Dir: zkDir})
	if err != nil {
		if temp {
			os.RemoveAll(zkDir)
		}
		return nil, nil, fmt.Errorf("fleet: start a ZooKeeper ensemble: %w", err)
	}
	return e, func() error {
		e.Stop()
		if temp {
			return os.RemoveAll(zkDir)
		}
		return nil
	}, nil
}
