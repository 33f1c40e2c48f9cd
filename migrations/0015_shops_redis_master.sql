-- The Sentinel-managed Redis master a shop's lua, naive, fenced, dedupe
-- and redis-decr use instead of its first Redis node (--redis-sentinel,
-- --redis-master; see internal/app/sentinel.go): "name via
-- sentinel,sentinel,...", the Sentinels sorted; '' for a shop without
-- one. Shops on this database must agree on it, as on redis_nodes.
ALTER TABLE shops ADD COLUMN redis_master VARCHAR(2000) NOT NULL DEFAULT '';
