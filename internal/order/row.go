package order

import "time"

// orderRow maps Order onto the orders table.
type orderRow struct {
	ID        string    `gorm:"column:id;primaryKey"`
	UserID    string    `gorm:"column:user_id"`
	ProductID string    `gorm:"column:product_id"`
	Quantity  int       `gorm:"column:quantity"`
	Strategy  string    `gorm:"column:strategy"`
	CreatedAt time.Time `gorm:"column:created_at"`
	// UniqueBuyer is 1 where the database allows one order per buyer (the
	// lock-free strategies: a second INSERT fails on orders_unique_buyer),
	// nil where the product lock must (see migrations 0009).
	UniqueBuyer *int `gorm:"column:unique_buyer"`
}

func (orderRow) TableName() string { return "orders" }

func toRow(o Order) orderRow {
	return orderRow{
		ID:        o.ID,
		UserID:    o.UserID,
		ProductID: o.ProductID,
		Quantity:  o.Quantity,
		Strategy:  string(o.Strategy),
		CreatedAt: o.CreatedAt,
	}
}

// one is the value of unique_buyer for the rows it applies to.
var one = 1

// toUniqueRow is toRow for the strategies that rely on orders_unique_buyer.
func toUniqueRow(o Order) orderRow {
	r := toRow(o)
	r.UniqueBuyer = &one
	return r
}
