package bench

import (
	"strconv"
	"testing"
)

// procCount is the number of shop replicas the demo runs.
const procCount = 3

// BenchmarkContendedProcs is BenchmarkContended with the goroutines spread
// over three "processes": three lockers, each with its own Redis clients and
// connection pools, as three shop replicas would have. Queuing waiters inside
// one process cannot hide the contention here: three processes race for the
// key on Redis. It also reports min-share, the least any process got as a
// fraction of its fair share (the issue asks for at least 0.5).
func BenchmarkContendedProcs(b *testing.B) {
	for _, md := range modes {
		var sets [][]impl // sets[p][j]: implementation j as process p has it
		for range procCount {
			cs := newClients()
			defer closeClients(cs)
			sets = append(sets, md.impls(cs))
		}
		for j := range sets[0] {
			procs := make([]impl, procCount)
			for p := range procs {
				procs[p] = sets[p][j]
			}
			for _, g := range []int{procCount, 64} {
				b.Run("mode="+md.name+"/impl="+procs[0].name+"/g="+strconv.Itoa(g), func(b *testing.B) {
					contend(b, procs, g)
				})
			}
		}
		for _, set := range sets {
			for _, im := range set {
				im.close()
			}
		}
	}
}
