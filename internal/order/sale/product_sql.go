package sale

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/stock"
)

// The statements on a product's row that more than one strategy runs.

// TakeUnits is the conditional UPDATE with which a lock-free write takes
// its units (sql-atomic, redis-decr, redis-queue's writer): the database
// reads, checks and writes the stock in one statement, under the row's
// lock, so two buyers can never both read n. Zero rows affected: too few
// units. Its arguments: the quantity, the product, the quantity.
const TakeUnits = "UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?"

// TakeRow takes product's row in tx with a no-op UPDATE (MySQL's row lock
// and SQLite's write lock alike), so that tx waits for a writer still
// holding it and every writer after it waits for tx.
func TakeRow(tx *gorm.DB, product string) error {
	return tx.Exec("UPDATE products SET stock = stock WHERE id = ?", product).Error
}

// ReadStock reads the stock of product id with a plain SELECT through q
// (the database, or a transaction). A product the database does not have
// is stock.ErrNotFound.
func ReadStock(ctx context.Context, q *gorm.DB, id string) (int, error) {
	var left int
	err := q.WithContext(ctx).Raw("SELECT stock FROM products WHERE id = ?", id).Row().Scan(&left)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: product %q", stock.ErrNotFound, id)
	}
	return left, err
}
