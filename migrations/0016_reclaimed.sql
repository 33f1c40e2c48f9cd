-- The redis-decr reservations the sweep gave back (see
-- internal/order/reclaim.go): one row per reservation whose hold ran out
-- with no order row, written in the transaction that found no row, before
-- the units go back in Redis. An order whose id is here is refused: its
-- INSERT selects from nothing when the row exists, so a shop that comes
-- back late with the order (it was slow, not dead) sells nothing of a
-- unit that was given back. The rows are few (one per reservation lost
-- by a dead or stalled shop) and are kept.
--   id            the reservation's id: the id its order would have had
--   product_id    the product
--   reclaimed_at  when the sweep gave it back, in UTC
CREATE TABLE IF NOT EXISTS reclaimed (
    id           CHAR(36)    NOT NULL PRIMARY KEY,
    product_id   VARCHAR(64) NOT NULL,
    reclaimed_at DATETIME(6) NOT NULL
);
