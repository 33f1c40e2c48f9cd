-- The epoch of the highest fencing token registered for the product
-- (strategies fenced and etcd): tokens are ordered by (fence_epoch, fence).
-- Redis-minted tokens have epoch 0; an etcd cluster's tokens carry the
-- cluster's epoch, so that a cluster rebuilt empty, whose revisions start
-- again near 1, is not refused until they catch up: its epoch is later.
ALTER TABLE products ADD COLUMN fence_epoch BIGINT NOT NULL DEFAULT 0;
