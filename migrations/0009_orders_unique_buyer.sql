-- 1 where the database itself allows one order per buyer (the strategies
-- that take no lock: sql-atomic, redis-decr), NULL elsewhere. The unique
-- index in 0010 covers (product_id, user_id, unique_buyer); rows with NULL
-- never collide, so the lock strategies keep showing what their locks do
-- (off: duplicate orders), while a repeated click under sql-atomic fails
-- its INSERT and rolls its stock update back.
ALTER TABLE orders ADD COLUMN unique_buyer SMALLINT NULL;
