// Package tally counts what one attack did to a sale: the answers the
// crowd got (Answers), the shop's own audit and events, how long a queue
// took to drain, which answered orders were never written, and the CPU
// the fleet spent. It reads the shops through the small interfaces it
// declares (Auditor, OrderLookup, CPUMeter) and knows nothing of locks
// or faults.
package tally
