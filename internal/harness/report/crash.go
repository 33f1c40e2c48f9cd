package report

import "github.com/flashsale/flashsale/internal/harness/fault"

// CrashDoc records an attack's --crash kills (fault.Crash): shops are
// numbered from 1, times are seconds since the attack began.
type CrashDoc struct {
	Planned int            `json:"planned"`
	Done    int            `json:"done"`
	Kills   []CrashKillDoc `json:"kills"`
	// AnsweredOrders counts the 201 and 202 answers that named an order;
	// AnsweredWithoutRow those whose order has no row (-1: unknown).
	AnsweredOrders     int `json:"answered_orders"`
	AnsweredWithoutRow int `json:"answered_without_row"`
	// DriftWaitedSeconds is how long redis-decr's drift took to read 0
	// after the attack, or was waited for in vain (the audit's drift says
	// which); 0 for the other rows.
	DriftWaitedSeconds float64 `json:"drift_waited_seconds"`
	Error              string  `json:"error,omitempty"`
}

// CrashKillDoc is one SIGKILL of a shop (fault.CrashKill). InFlight counts
// the requests the load generator sent the shop before the kill whose
// result came after it, Cut those of them that got no answer, Refused
// those sent from the kill until the shop was back that got none.
// BackSeconds is -1 if the shop never came back.
type CrashKillDoc struct {
	Shop        int     `json:"shop"`
	PID         int     `json:"pid"`
	NewPID      int     `json:"new_pid,omitempty"`
	AtSeconds   float64 `json:"at_seconds"`
	BackSeconds float64 `json:"back_seconds"`
	InFlight    int     `json:"in_flight"`
	Cut         int     `json:"cut"`
	Refused     int     `json:"refused"`
}

// newCrashDoc is c with units, its shops numbered from 1.
func newCrashDoc(c *fault.Crash) *CrashDoc {
	d := &CrashDoc{Planned: c.Planned, Done: len(c.Kills), Kills: []CrashKillDoc{},
		AnsweredOrders: c.Answered, AnsweredWithoutRow: c.WithoutOrder,
		DriftWaitedSeconds: c.DriftWaited.Seconds(), Error: c.Err}
	for _, k := range c.Kills {
		kd := CrashKillDoc{Shop: k.Shop + 1, PID: k.PID, NewPID: k.NewPID, AtSeconds: k.At.Seconds(),
			BackSeconds: k.Back.Seconds(), InFlight: k.InFlight, Cut: k.Cut, Refused: k.Refused}
		if k.Back < 0 {
			kd.BackSeconds = -1
		}
		d.Kills = append(d.Kills, kd)
	}
	return d
}
