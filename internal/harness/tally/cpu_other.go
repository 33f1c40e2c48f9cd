//go:build !unix

package tally

import (
	"errors"
	"time"
)

// OwnCPU is not measured here: cpu/order shows "-".
func OwnCPU() (time.Duration, error) {
	return 0, errors.New("tally: this platform's process CPU time is not read")
}
