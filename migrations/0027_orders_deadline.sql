-- A pending order's deadline, in milliseconds since the Unix epoch by the
-- database's clock (the one clock every shop shares): set in the
-- transaction that writes the order, as the database's now plus the
-- product's pay_within_ms. NULL for an order that never had a deadline.
ALTER TABLE orders ADD COLUMN deadline_ms BIGINT NULL;
