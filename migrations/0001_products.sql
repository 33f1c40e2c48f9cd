-- Products on sale. stock is what is left; initial_stock is what the sale
-- started with, so the audit can check stock + sold = initial_stock.
-- lock_mode and the timing settings make a run reproducible and let one
-- fleet run every mode without a restart:
--   lock_ttl_ms  TTL of the product lock (naive: never renewed)
--   work_ms      simulated business latency inside the critical section
--   stall_ms     a rare, longer stall inside the critical section (a GC pause,
--                a slow payment call), happening with probability stall_rate
-- One dialect for MySQL 8, MariaDB 10.11 and SQLite: no engine or charset
-- clauses (the server defaults are InnoDB and utf8mb4).
CREATE TABLE IF NOT EXISTS products (
    id            VARCHAR(64)  NOT NULL PRIMARY KEY,
    name          VARCHAR(200) NOT NULL,
    stock         INT          NOT NULL,
    initial_stock INT          NOT NULL,
    lock_mode     VARCHAR(16)  NOT NULL,
    lock_ttl_ms   INT          NOT NULL,
    work_ms       INT          NOT NULL,
    stall_ms      INT          NOT NULL,
    stall_rate    DOUBLE       NOT NULL,
    created_at    DATETIME(6)  NOT NULL
);
