//go:build !linux

package ledger

// ReadMachine knows no machine-wide counters here: the share is unknown.
func ReadMachine() MachineTicks { return MachineTicks{} }
