package locktable

import (
	"context"
	"runtime"
	"time"
)

// cpuUse is how busy the cores were during a window: this process (the
// clients of every lock, and the workers) and the whole machine (the
// servers too, when they run here), each as a share of all the cores.
// Known is false where the system does not say (see readCPU).
type cpuUse struct {
	Client, Machine float64
	Known           bool
}

// cpuSample is one reading of the counters readCPU knows.
type cpuSample struct {
	proc        time.Duration // this process's user + system time
	busy, total uint64        // the machine's busy and total ticks, all cores
	ok          bool
}

// cpuBetween is the use between two readings wall apart.
func cpuBetween(a, b cpuSample, wall time.Duration) cpuUse {
	if !a.ok || !b.ok || wall <= 0 || b.total <= a.total {
		return cpuUse{}
	}
	return cpuUse{
		Client:  float64(b.proc-a.proc) / (float64(wall) * float64(runtime.NumCPU())),
		Machine: float64(b.busy-a.busy) / float64(b.total-a.total),
		Known:   true,
	}
}

// MachineBusy returns the machine's busy share of all its cores over d,
// or ok false where the system does not say or ctx ended first: run
// before a measurement, it tells what else the machine was doing.
func MachineBusy(ctx context.Context, d time.Duration) (busy float64, ok bool) {
	before := readCPU()
	if !sleepUntil(ctx, time.Now().Add(d)) {
		return 0, false
	}
	use := cpuBetween(before, readCPU(), d)
	return use.Machine, use.Known
}
