-- How long a buyer has to pay for an order of this product, in
-- milliseconds. 0: no pay window, every order is final (paid) the moment
-- it is written. Above 0: an order is pending until it is paid, or its
-- deadline passes (expired) or its buyer cancels it, and then its units go
-- back on sale (see internal/order/life).
ALTER TABLE products ADD COLUMN pay_within_ms BIGINT NOT NULL DEFAULT 0;
