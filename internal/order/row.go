package order

import "time"

// orderRow maps Order onto the orders table.
type orderRow struct {
	ID        string    `gorm:"column:id;primaryKey"`
	UserID    string    `gorm:"column:user_id"`
	ProductID string    `gorm:"column:product_id"`
	Quantity  int       `gorm:"column:quantity"`
	LockMode  string    `gorm:"column:lock_mode"`
	CreatedAt time.Time `gorm:"column:created_at"`
}

func (orderRow) TableName() string { return "orders" }

func toRow(o Order) orderRow {
	return orderRow{
		ID:        o.ID,
		UserID:    o.UserID,
		ProductID: o.ProductID,
		Quantity:  o.Quantity,
		LockMode:  string(o.LockMode),
		CreatedAt: o.CreatedAt,
	}
}
