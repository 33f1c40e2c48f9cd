package testenv

import (
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
)

// TestSentinels starts a replicated Redis, kills its master, and waits for
// the Sentinels to promote the replica; once the test is over, every
// process it started has exited and been reaped.
func TestSentinels(t *testing.T) {
	var procs []*redisproc.Process
	t.Run("failover", func(t *testing.T) {
		s := NewSentinels(t)
		procs = s.Set().Processes()
		if s.Master() == s.Replica() || len(s.Addrs()) != 3 {
			t.Fatalf("master %s, replica %s, Sentinels %v: want two servers and 3 Sentinels", s.Master(), s.Replica(), s.Addrs())
		}
		s.AwaitMaster(s.Master(), time.Second) // NewSentinels waited for it
		start := time.Now()
		s.KillMaster()
		s.AwaitMaster(s.Replica(), 30*time.Second)
		t.Logf("the Sentinels named the replica %v after the master was killed", time.Since(start).Round(time.Millisecond))
	})
	for _, p := range procs {
		select {
		case <-p.Exited():
		default:
			t.Errorf("%s (pid %d) still runs after its test ended", p.Name, p.Pid())
		}
	}
}
