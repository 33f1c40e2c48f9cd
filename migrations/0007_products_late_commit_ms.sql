-- The late-commit fault: a chosen order holds back its commit (and its
-- lock renewals) this long after its statements ran, then commits
-- regardless of the lock, as a commit already on the wire would. 0: never.
ALTER TABLE products ADD COLUMN late_commit_ms INT NOT NULL DEFAULT 0;
