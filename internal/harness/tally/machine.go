package tally

// MachineTicks is one reading of the whole machine's CPU counters: busy
// and total ticks over every core, so that the servers a run starts
// (MariaDB, redis-server, etcd) count as well as this process.
type MachineTicks struct {
	Busy, Total uint64
	OK          bool // false where the system does not say (machine_other.go)
}

// MachineBusy is the busy share of every core between two readings, a
// then b, in 0..1; -1 when either is unknown or no time passed.
func MachineBusy(a, b MachineTicks) float64 {
	if !a.OK || !b.OK || b.Total <= a.Total {
		return -1
	}
	return float64(b.Busy-a.Busy) / float64(b.Total-a.Total)
}
