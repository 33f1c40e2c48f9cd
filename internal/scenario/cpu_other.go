//go:build !unix

package scenario

import (
	"errors"
	"time"
)

// ownCPU is not measured here: cpu/order shows "-".
func ownCPU() (time.Duration, error) {
	return 0, errors.New("scenario: this platform's process CPU time is not read")
}
