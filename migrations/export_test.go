package migrations

import (
	"context"

	"gorm.io/gorm"
)

// ApplyFirst applies only the first n embedded migrations (the schema as an
// older release shipped it).
func ApplyFirst(ctx context.Context, db *gorm.DB, n int) error {
	all, err := load()
	if err != nil {
		return err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	if db.Dialector.Name() == "mysql" {
		return applyMySQL(ctx, sqlDB, all[:n])
	}
	return applySQLite(ctx, sqlDB, all[:n])
}
