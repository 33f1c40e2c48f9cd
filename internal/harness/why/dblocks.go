package why

import "fmt"

// triesLost is sql-version's cost: the tries that found the version moved
// and threw their read and their work away, and the tries per order that
// makes (the buyers outrun on every try are in the cost, 503
// version_conflict).
func triesLost(m Row) (fact, bool) {
	n, orders := m.Events.VersionMoved, m.Audit.Orders
	if orders == 0 {
		return fact{}, false
	}
	per := float64(int64(orders)+n) / float64(orders)
	return fact{name: "tries_per_order", value: per,
		text: fmt.Sprintf("%d tries found it moved and threw their read and %v of work away (%.1f tries per order)", n, m.Settings.Work, per)}, true
}
