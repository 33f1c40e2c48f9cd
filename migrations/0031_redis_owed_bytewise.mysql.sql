-- The ids of redis_owed compare as bytes, as every other id column does on
-- MySQL and MariaDB (0013 says why); SQLite compares bytes already.
ALTER TABLE redis_owed
    MODIFY order_id   CHAR(36)    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY product_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY user_id    VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
