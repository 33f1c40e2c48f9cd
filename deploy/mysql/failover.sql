-- The failover shops' database (compose.yaml, profile failover). Shops on
-- one database must lock on the same servers, and the failover shops lock
-- on a Sentinel-managed master that shop1..shop3 do not use: beside them
-- on database flashsale, the shop registry would refuse to start them. The
-- mysql image runs this file once, when it initialises its empty data
-- directory, after it has created the user flashsale.
CREATE DATABASE IF NOT EXISTS flashsale_failover CHARACTER SET utf8mb4;
GRANT ALL PRIVILEGES ON flashsale_failover.* TO 'flashsale'@'%';
