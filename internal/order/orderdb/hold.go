package orderdb

import "time"

// RowHold times how long one sale of a strategy without a lock held its hot
// row: from the answer of the statement that took it (Took; on SQLite,
// whose write lock is taken at BEGIN, from Began) to the COMMIT's (Held),
// answers at both ends, as a lock's hold. One per sale, used by one
// goroutine; the zero RowHold is MySQL's.
type RowHold struct {
	wholeDB bool      // SQLite: BEGIN takes the database's one write lock
	from    time.Time // when the hold began, zero before
}

// RowHold returns a RowHold for a sale on w's database.
func (w *Writer) RowHold() *RowHold {
	return &RowHold{wholeDB: w.db.Dialector.Name() == "sqlite"}
}

// Began is called first in a try of the transaction, once BEGIN has
// answered: it forgets an earlier try's hold, which its rollback ended,
// and starts the hold on SQLite.
func (h *RowHold) Began() {
	h.from = time.Time{}
	if h.wholeDB {
		h.from = time.Now()
	}
}

// Took is called when the statement that takes the hot row has answered.
// A hold already started (SQLite's, at BEGIN) keeps its start.
// sql-version calls it at its read, before the transaction and without
// Began: its window opens there.
func (h *RowHold) Took() {
	if h.from.IsZero() {
		h.from = time.Now()
	}
}

// Start is when the hold began, zero before.
func (h *RowHold) Start() time.Time { return h.from }

// Held is how long the row has been held, called at the COMMIT's answer;
// false if nothing took it.
func (h *RowHold) Held() (time.Duration, bool) {
	if h.from.IsZero() {
		return 0, false
	}
	return time.Since(h.from), true
}
