//go:build unix

package tally

import (
	"syscall"
	"time"
)

// OwnCPU is this process's user and system CPU time so far.
func OwnCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
