package main

import (
	"os"
	"runtime/debug"
)

// loadgenGOGC is this process's GOGC unless the environment sets one.
const loadgenGOGC = 400

// collectLess runs this process's garbage collector a quarter as often as
// Go's default (GOGC=100), unless GOGC is set in the environment.
//
// Without --targets, this process is the load generator and the three
// shops at once, on one heap, with every row's results kept for the audit
// and the report. A collection cycle marks all of it, on two cores that
// the sale already keeps busy, and the shops answer late while it runs:
// at 4,000 clicks/s the default ran a cycle a second, each one a spike of
// 20 to 90 ms in a quarter second of answers. A shop in a process of its
// own (cmd/shop, or --crash's child shops) has only its own small heap and
// keeps Go's default. The cost: the heap may grow to five times what is
// live instead of twice.
func collectLess() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(loadgenGOGC)
	}
}
