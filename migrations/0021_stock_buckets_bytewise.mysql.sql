-- stock_buckets.product_id compares bytes, as every id column does on
-- MySQL and MariaDB (see 0013_ids_bytewise.mysql.sql). It may run again.
ALTER TABLE stock_buckets
    MODIFY product_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
