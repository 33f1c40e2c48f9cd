package order

import (
	"gorm.io/gorm"
)

// LifeAudit is a pay-window product's sale counted both ways: the units
// still held or sold for good, and those that went back on sale.
type LifeAudit struct {
	// Pending and Paid are the units of the pending and the paid orders:
	// initial = stock + pending + paid when nothing is lost or made up.
	Pending, Paid int
	// Expired and Cancelled are the units of the orders that ended so,
	// each given back on sale in the transaction that ended it.
	Expired, Cancelled int
	// Placed is every unit ever ordered, whatever became of it; Resold
	// the units sold beyond the initial stock because one came back
	// (at most Expired + Cancelled).
	Placed, Resold int
	// Undersold counts units neither sold nor on sale: initial − stock −
	// pending − paid, when above 0 (a unit expired and never returned).
	Undersold int
}

// auditLife fills in a.Life for a product with a pay window, in tx, and
// counts as oversold every unit both on sale and sold (stock + pending +
// paid beyond the initial stock): a unit paid after it was sold again
// is one of them, as is a unit returned twice.
func auditLife(tx *gorm.DB, a *Audit) error {
	var l LifeAudit
	err := tx.Raw(`SELECT
		COALESCE(SUM(CASE WHEN state = 'pending' THEN quantity END), 0),
		COALESCE(SUM(CASE WHEN state = 'paid' THEN quantity END), 0),
		COALESCE(SUM(CASE WHEN state = 'expired' THEN quantity END), 0),
		COALESCE(SUM(CASE WHEN state = 'cancelled' THEN quantity END), 0),
		COALESCE(SUM(quantity), 0)
		FROM orders WHERE product_id = ?`, a.ProductID).
		Row().Scan(&l.Pending, &l.Paid, &l.Expired, &l.Cancelled, &l.Placed)
	if err != nil {
		return err
	}
	l.Resold = min(max(0, l.Placed-a.InitialStock), l.Expired+l.Cancelled)
	l.Undersold = max(0, a.InitialStock-a.Stock-l.Pending-l.Paid)
	a.Life = &l
	return nil
}
