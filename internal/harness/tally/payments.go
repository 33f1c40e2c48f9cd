package tally

// Payments count what the load generator's payers were told, for a sale
// with payments: Chosen winners were picked to pay (the others never
// do); of their payments, Paid got 200, Expired 409 expired (too late:
// the unit goes, or went, back on sale), and Failed anything else or no
// answer at all (a shop killed under it).
type Payments struct {
	Chosen  int `json:"chosen"`
	Paid    int `json:"paid"`
	Expired int `json:"expired"`
	Failed  int `json:"failed"`
}
