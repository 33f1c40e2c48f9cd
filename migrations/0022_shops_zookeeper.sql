-- The ZooKeeper ensemble a shop's zookeeper strategy locks on
-- (--zookeeper; see internal/app/lockservers.go): its members' host:port,
-- sorted; '' for a shop without one. Shops on this database must agree on
-- it, as on etcd_endpoints.
ALTER TABLE shops ADD COLUMN zookeeper VARCHAR(2000) NOT NULL DEFAULT '';
