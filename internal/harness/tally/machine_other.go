//go:build !linux

package tally

// ReadMachine knows no machine-wide counters here: the share is unknown.
func ReadMachine() MachineTicks { return MachineTicks{} }
