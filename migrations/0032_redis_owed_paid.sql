-- When Redis was paid a return of redis_owed, by the database's clock
-- (Unix ms); NULL while it is owed. A paid row stays until it is
-- owedKeep old (internal/order/owed.go) and is then sent once more: a
-- Redis failover may lose a return the old master took and never passed
-- on, and a stock loaded from the database counts it (orderdb.OwedIDs).
ALTER TABLE redis_owed ADD COLUMN paid_ms BIGINT NULL;
