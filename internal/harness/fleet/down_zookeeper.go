package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

// killedMembers takes members of the ensemble the fleet started down for
// --zookeeper-kill: SIGKILL, as a machine that dies, and after the attack
// a restart on the member's own data.
type killedMembers struct{ e *zkproc.Ensemble }

// Describe implements NodeKiller.
func (k *killedMembers) Describe() string {
	return "ZooKeeper members SIGKILLed, restarted on their data after the attack"
}

// Kill implements NodeKiller. d is not used: the members stay down until
// restore.
func (k *killedMembers) Kill(_ context.Context, members []int, _ time.Duration) (func(context.Context) error, error) {
	for _, i := range members {
		if i < 0 || i >= zkproc.Members {
			return nil, fmt.Errorf("fleet: ZooKeeper member %d: only %d members", i+1, zkproc.Members)
		}
	}
	for _, i := range members {
		k.e.Kill(i)
	}
	return func(ctx context.Context) error {
		// Together: a member alone waits for a peer to form a quorum.
		errs := make([]error, len(members))
		var wg sync.WaitGroup
		for n, i := range members {
			wg.Go(func() { errs[n] = k.e.Restart(ctx, i) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}, nil
}
