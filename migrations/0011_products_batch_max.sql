-- Batching (strategies lua, redlock, fenced): the most buyers one holder of
-- the product lock serves in one transaction; 0 means one at a time.
ALTER TABLE products ADD COLUMN batch_max INT NOT NULL DEFAULT 0;
