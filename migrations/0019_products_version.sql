-- The row's version, for strategy sql-version (the optimistic lock): a
-- sale reads the stock and the version, does its work, and writes only if
-- the version is still the one it read, adding 1 (see
-- internal/order/version.go). Every product starts at 0.
ALTER TABLE products ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
