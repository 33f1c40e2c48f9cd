//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used so far, user plus
// system. On a machine shared with other work it is steadier than wall
// time: waiting for a core does not count.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
