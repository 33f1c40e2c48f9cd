-- The cluster shops' database (compose.yaml, profile cluster). Shops on one
-- database must lock on the same servers, and the cluster shops put their
-- single-node locks and stock on a Redis Cluster that shop1..shop3 do not
-- use: beside them on database flashsale, the shop registry would refuse to
-- start them. The mysql image runs this file once, when it initialises its
-- empty data directory, after it has created the user flashsale.
CREATE DATABASE IF NOT EXISTS flashsale_cluster CHARACTER SET utf8mb4;
GRANT ALL PRIVILEGES ON flashsale_cluster.* TO 'flashsale'@'%';
