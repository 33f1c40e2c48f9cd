//go:build unix

package scenario

import (
	"syscall"
	"time"
)

// ownCPU is this process's user and system CPU time so far.
func ownCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
