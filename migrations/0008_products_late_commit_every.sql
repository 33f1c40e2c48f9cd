-- Which orders commit late: in each shop process, the first order of the
-- product to reach its commit, then every late_commit_every-th after it.
ALTER TABLE products ADD COLUMN late_commit_every INT NOT NULL DEFAULT 0;
