package orderdb

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/life"
	"github.com/flashsale/flashsale/internal/stock"
)

// Row maps Order onto the orders table.
type Row struct {
	ID        string    `gorm:"column:id;primaryKey"`
	UserID    string    `gorm:"column:user_id"`
	ProductID string    `gorm:"column:product_id"`
	Quantity  int       `gorm:"column:quantity"`
	Strategy  string    `gorm:"column:strategy"`
	CreatedAt time.Time `gorm:"column:created_at"`
	// UniqueBuyer is 1 where the database allows one order per buyer (a
	// second INSERT fails on orders_unique_buyer: Insert's rows); nil where
	// the product lock must (RowOf), or off duplicates (migrations 0009, 0010).
	UniqueBuyer *int `gorm:"column:unique_buyer"`
	// Bucket is the stock bucket the order's units came from
	// (stock.Product.Buckets), nil for the product's own row.
	Bucket *int `gorm:"column:bucket"`
	// State is where the order stands (package life): pending for an
	// order with a pay window, paid for one that is final at once.
	State string `gorm:"column:state"`
	// PayWithin is the order's pay window, from which insert has the
	// database stamp a pending order's deadline (life.Stamp).
	PayWithin time.Duration `gorm:"-"`
}

func (Row) TableName() string { return "orders" }

// RowOf is o's row, for a strategy whose product lock allows one order
// per buyer.
func RowOf(o Order) Row {
	r := Row{
		ID:        o.ID,
		UserID:    o.UserID,
		ProductID: o.ProductID,
		Quantity:  o.Quantity,
		Strategy:  string(o.Strategy),
		CreatedAt: o.CreatedAt,
		Bucket:    o.Bucket,
		State:     string(life.Paid),
		PayWithin: o.PayWithin,
	}
	if o.PayWithin > 0 {
		r.State = string(life.Pending)
	}
	return r
}

// one is the value of unique_buyer for the rows it applies to.
var one = 1

// UniqueRowOf is RowOf for the strategies that rely on orders_unique_buyer.
func UniqueRowOf(o Order) Row {
	r := RowOf(o)
	r.UniqueBuyer = &one
	return r
}

// What a lock-free write says when the database refused it: the buyer has
// an order already (the unique key), or the stock is below the quantity
// (the conditional UPDATE, TakeUnits, matched no row).
var (
	ErrDuplicateKey = errors.New("order: the buyer has an order (unique key)")
	ErrNoUnits      = errors.New("order: no units left for the conditional update")
)

// Insert inserts o's row with its unique buyer key (UniqueRowOf) in tx:
// ErrDuplicateKey if the buyer has an order for the product already, or
// the database's error.
func Insert(tx *gorm.DB, o Order) error {
	return insert(tx, UniqueRowOf(o))
}

// insert inserts row, as Insert does.
func insert(tx *gorm.DB, row Row) error {
	if err := InsertRows(tx, []Row{row}); err != nil {
		if stock.IsDuplicateKey(err) {
			return ErrDuplicateKey
		}
		return err
	}
	return nil
}

// InsertRows inserts rows in tx with one multi-row INSERT, and has the
// database stamp the deadlines of the pending ones (life.Stamp), in the
// same transaction: a pending order is never seen without its deadline.
// Errors are the database's.
func InsertRows(tx *gorm.DB, rows []Row) error {
	if err := tx.Create(&rows).Error; err != nil {
		return err
	}
	pending := map[time.Duration][]string{} // one product's rows share a window
	for _, r := range rows {
		if r.State == string(life.Pending) {
			pending[r.PayWithin] = append(pending[r.PayWithin], r.ID)
		}
	}
	for within, ids := range pending {
		if err := life.Stamp(tx, within, ids); err != nil {
			return err
		}
	}
	return nil
}

// Duplicate is the error for user, who already has an order for product:
// a *DuplicateOrderError naming that order, if the database can say which
// (else with no OrderID). It asks on a context that survives ctx.
func (w *Writer) Duplicate(ctx context.Context, product, user string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseTimeout)
	defer cancel()
	var id string
	_ = w.db.WithContext(ctx).
		Raw("SELECT id FROM orders WHERE product_id = ? AND user_id = ? AND "+life.LiveSQL+" LIMIT 1", product, user).
		Row().Scan(&id)
	return &DuplicateOrderError{OrderID: id, UserID: user, ProductID: product}
}

// Written returns which of ids have an order row, as db (a transaction or
// not) reads them: the set of those found.
func Written(db *gorm.DB, ids []string) (map[string]bool, error) {
	var found []string
	if err := db.Raw("SELECT id FROM orders WHERE id IN ?", ids).Scan(&found).Error; err != nil {
		return nil, err
	}
	written := make(map[string]bool, len(found))
	for _, id := range found {
		written[id] = true
	}
	return written, nil
}
