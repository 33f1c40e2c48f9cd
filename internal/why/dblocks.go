package why

import (
	"fmt"
	"strings"
)

// forUpdateLine is the clause of a sql-for-update row: the database's row
// lock, held from the read to the commit, across the work and any late
// commit.
func forUpdateLine(s Settings, m *Row, overlaps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no Redis: the database locked the product's row (SQLite: the whole database) from the read (SELECT … FOR UPDATE) to the commit, across each order's %v of work", s.Work)
	if m.Events.LateCommits > 0 {
		fmt.Fprintf(&b, "; %d commits were held back %v with the row still locked, and the next buyer waited for them", m.Events.LateCommits, s.LateCommit)
	}
	a := m.Audit
	fmt.Fprintf(&b, ": sold %d of %d, %d overlapping sales, oversold %d, duplicate orders %d",
		a.Sold, a.InitialStock, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	return b.String()
}

// versionLine is the clause of a sql-version row: the tries its buyers
// threw away, work and all, because another buyer's write came first (the
// buyers outrun on every try are in the cost, 503 version_conflict).
func versionLine(s Settings, m *Row, overlaps int) string {
	var b strings.Builder
	ev, a := m.Events, m.Audit
	b.WriteString("no lock: each try read the stock and its version, worked, and wrote only if the version had not moved")
	if a.Orders > 0 {
		fmt.Fprintf(&b, "; %d tries found it moved and threw their read and %v of work away (%.1f tries per order)",
			ev.VersionMoved, s.Work, float64(int64(a.Orders)+ev.VersionMoved)/float64(a.Orders))
	}
	if ev.LateCommits > 0 {
		fmt.Fprintf(&b, "; %d commits were held back %v", ev.LateCommits, s.LateCommit)
	}
	fmt.Fprintf(&b, ": sold %d of %d, %d lost updates, oversold %d, duplicate orders %d",
		a.Sold, a.InitialStock, max(overlaps, 0), a.Oversold, a.DuplicateOrders)
	return b.String()
}
