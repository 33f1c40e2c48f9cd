-- Orders, one row per successful purchase. id is a UUID; lock_mode records
-- the mode the product had when the order was placed.
--
-- There is deliberately NO unique constraint on (user_id, product_id): with
-- lock mode "off" repeated clicks must be able to create duplicate orders,
-- and the audit counts them. That is the lesson; a real shop would add the
-- constraint as a last line of defence.
CREATE TABLE IF NOT EXISTS orders (
    id         CHAR(36)    NOT NULL PRIMARY KEY,
    user_id    VARCHAR(64) NOT NULL,
    product_id VARCHAR(64) NOT NULL,
    quantity   INT         NOT NULL,
    lock_mode  VARCHAR(16) NOT NULL,
    created_at DATETIME(6) NOT NULL
);
