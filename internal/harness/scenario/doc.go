// Package scenario is the 双11 sale itself: a crowd of buyers racing for a
// few units of one product, run once per row of the table against a fleet
// of shops (package fleet), measured with Vegeta.
//
// For each row (Run): create a fresh product with the row's strategy and
// the run's settings; arm the run's faults that strike the row (package fault, each a
// fault.Fault); attack the product with the crowd's clicks at a
// constant rate, spread over the shops; stop the faults; read the shop's
// audit and count what it says (package tally); and explain the row in
// one line (package why). Package report turns the Outcome into the table
// and the report folder; cmd/loadgen wires flags, fleet, run and report.
package scenario
