package orderdb

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// Snapshot runs read in one transaction, so that the reads it makes with
// tx describe one moment of the database: on MySQL and MariaDB a
// read-only one at REPEATABLE READ, whatever the session's default (under
// READ COMMITTED each statement reads a moment of its own); SQLite's
// transaction is one moment already. read must only read. Errors:
// read's, or the database's.
func Snapshot(ctx context.Context, db *gorm.DB, read func(tx *gorm.DB) error) error {
	if db.Dialector.Name() == "sqlite" {
		return db.WithContext(ctx).Transaction(read)
	}
	return db.WithContext(ctx).Transaction(read, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
}

// OwedIDs returns the ids of the ended orders of product (of its stock
// bucket, or of its own stock if bucket is nil) whose units the database
// has back and Redis may not: the rows of table redis_owed, paid or not
// (a paid one is kept a while, since a Redis failover may lose the
// return). A stock loaded into Redis from the database counts them
// already: read both in one Snapshot. Errors: the database's.
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
