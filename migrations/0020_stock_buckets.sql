-- Stock buckets (strategy sql-atomic): a hot product's stock split over
-- K rows, so that K buyers can take a unit at once, each holding one
-- row's lock instead of all queueing on the product's. products.buckets
-- is K; 0 or 1 means no buckets, the stock lives in products.stock as
-- before. With K >= 2, products.stock keeps the initial stock untouched
-- and the stock left is the sum of the product's rows here (see
-- internal/order/buckets).
--   product_id  the product
--   bucket      0..K-1
--   stock       the units left in this bucket; it only goes down
-- orders.bucket is the bucket an order's units came from (NULL: the
-- product's own row), for the audit's per-bucket figures.
ALTER TABLE products ADD COLUMN buckets INT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN bucket INT NULL;
CREATE TABLE IF NOT EXISTS stock_buckets (
    product_id VARCHAR(64) NOT NULL,
    bucket     INT         NOT NULL,
    stock      INT         NOT NULL,
    PRIMARY KEY (product_id, bucket)
);
