-- The shops running on this database and the lock servers each one takes
-- its locks on (see internal/app/registry.go). A shop adds its row at
-- start, renews seen_at while it runs and removes the row when it stops;
-- a crashed shop's row goes stale. Shops that share this database must
-- share their lock servers, or their locks exclude nothing: a shop whose
-- servers differ from a live shop's refuses to start.
--   id              host/pid/random, unique per process start
--   redis_nodes     node 0 first (it alone serves lua, naive, dedupe and
--                   redis-decr), then the others sorted
--   etcd_endpoints  the etcd members, sorted
--   seen_at         the last heartbeat, in UTC by the database's clock
CREATE TABLE IF NOT EXISTS shops (
    id             VARCHAR(128)  NOT NULL PRIMARY KEY,
    redis_nodes    VARCHAR(2000) NOT NULL,
    etcd_endpoints VARCHAR(2000) NOT NULL,
    seen_at        DATETIME(6)   NOT NULL
);
