-- lock_mode became strategy: besides the lock modes (off, naive, lua,
-- redlock) a product may now be sold by fenced, sql-atomic or redis-decr,
-- which are not all locks. The values already stored keep their meaning.
ALTER TABLE products RENAME COLUMN lock_mode TO strategy;
