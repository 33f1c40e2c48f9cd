-- How many times the sweep has reclaimed redis-decr reservations of the
-- product (see internal/order/reclaim.go): it adds 1 in each transaction
-- that writes rows to reclaimed. An order remembers the count it read
-- before its reservation was made, and takes its units only while the
-- count is unchanged; if it changed, its reservation may be among the
-- reclaimed, and it looks (internal/order/reserved_write.go).
ALTER TABLE products ADD COLUMN reclaims BIGINT NOT NULL DEFAULT 0;
