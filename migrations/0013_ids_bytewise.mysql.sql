-- Ids are case-sensitive byte strings everywhere. 'Alice' and 'alice' are
-- two buyers to Redis keys, to SQLite and to Go's string compares (the
-- batch flow), but MySQL's default collations ignore case
-- (utf8mb4_0900_ai_ci on MySQL 8, utf8mb4_general_ci on MariaDB), which
-- made them one buyer to orders_unique_buyer, to the duplicate-order COUNT
-- and to the audit's GROUP BY. utf8mb4_bin compares bytes, as SQLite does
-- already (hence a MySQL-only file). It ignores trailing spaces, which ids
-- cannot have (stock.ValidID).
--
-- MODIFY restates each column as 0001, 0002 and 0012 created it, with the
-- collation; the primary keys and indexes on it stay, rebuilt (the table is
-- copied: slow on a large orders table). Each statement may run again.
ALTER TABLE products
    MODIFY id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
ALTER TABLE orders
    MODIFY id         CHAR(36)    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY user_id    VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY product_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
ALTER TABLE shops
    MODIFY id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
