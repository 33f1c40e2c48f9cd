-- The returns a Redis strategy (redis-decr, redis-queue) still owes Redis
-- (see internal/order/owed.go): one row per order ended (expired or
-- cancelled), written in the transaction that ends it and gives its units
-- back to the database, and deleted once Redis has them too. A shop that
-- dies between the commit and Redis leaves its row, and any shop's sweep
-- finishes it; Redis's return script runs once per order however often it
-- is sent.
--   order_id    the ended order
--   product_id  its product
--   bucket      its stock bucket, NULL for the product's own stock
--   user_id     its buyer, whom Redis lets buy again
--   quantity    the units owed
--   created_ms  when the order ended, by the database's clock (Unix ms)
CREATE TABLE IF NOT EXISTS redis_owed (
    order_id   CHAR(36)    NOT NULL PRIMARY KEY,
    product_id VARCHAR(64) NOT NULL,
    bucket     INTEGER     NULL,
    user_id    VARCHAR(64) NOT NULL,
    quantity   INTEGER     NOT NULL,
    created_ms BIGINT      NOT NULL
);
