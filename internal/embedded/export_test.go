package embedded

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
)

// EtcdStartTries is how often StartEtcd tries before it gives up.
const EtcdStartTries = etcdStartTries

// LoseEtcdPortRace makes the next times cluster starts lose the race that
// StartEtcd's comment describes: right after a try has chosen its ports,
// another listener takes port number i of them (member i/2+1's; even i its
// client port, odd i its peer port), as a process starting beside it
// could. The listeners close, and the real port choice comes back, when tb
// ends. A test that calls it must not run in parallel with other tests of
// the package.
func LoseEtcdPortRace(tb testing.TB, i, times int) {
	var left atomic.Int64
	left.Store(int64(times))
	choose := pickPorts
	pickPorts = func(n int) ([]int, error) {
		ports, err := choose(n)
		if err != nil || left.Add(-1) < 0 {
			return ports, err
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[i]))
		if err != nil {
			tb.Errorf("take port %d: %v", ports[i], err)
			return ports, nil
		}
		tb.Cleanup(func() { l.Close() })
		return ports, nil
	}
	tb.Cleanup(func() { pickPorts = choose })
}
