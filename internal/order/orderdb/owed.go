package orderdb

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// Snapshot runs read, which must only read, in one transaction that sees
// one moment of the database: on MySQL and MariaDB read-only at REPEATABLE
// READ, whatever the session's default; SQLite's already does. Errors:
// read's, or the database's.
func Snapshot(ctx context.Context, db *gorm.DB, read func(tx *gorm.DB) error) error {
	if db.Dialector.Name() == "sqlite" {
		return db.WithContext(ctx).Transaction(read)
	}
	return db.WithContext(ctx).Transaction(read, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
}

// OwedIDs returns the ids of the rows of redis_owed (paid or not) of
// product's stock, or of its bucket: returns the database has and Redis
// may not. A stock loaded into Redis counts them already: read both in one
// Snapshot. Errors: the database's.
func OwedIDs(tx *gorm.DB, product string, bucket *int) ([]string, error) {
	q := tx.Table("redis_owed").Where("product_id = ?", product)
	if bucket == nil {
		q = q.Where("bucket IS NULL")
	} else {
		q = q.Where("bucket = ?", *bucket)
	}
	var ids []string
	return ids, q.Pluck("order_id", &ids).Error
}
