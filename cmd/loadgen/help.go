package main

// usageHeader opens --help, before the flags (package flagenv prints
// them, each with its environment variable and default).
const usageHeader = `loadgen runs the 双11 flash sale once per strategy and prints, side by side,
what each did: orders, oversold units, duplicate orders, throughput and
latency. The strategies: off, naive, lua and redlock lock the stock with Redis
(the first two to show how locks fail); fenced adds a fencing token the
database checks; etcd and zookeeper take that fenced lock from a
consensus cluster; sql-for-update and sql-version lock in the database (its
row lock, and a version compared with the write); sql-atomic, redis-decr and
redis-queue take no lock, as production flash sales do, and sql-one-trip
sends sql-atomic's transaction to MySQL in one round trip; fenced+batch lets
one holder of the lock serve every buyer its shop has queued in one
transaction. With no flags it starts everything it needs in process (five
embedded Redis nodes, a three-member etcd cluster, a SQLite file, three
shops on loopback ports), and a three-member ZooKeeper ensemble beside it
where java and Debian's zookeeper are installed; where they are not, the
zookeeper row shows as skipped, with the command that enables it.

Usage:
  loadgen [flags]                                          embedded, no set-up
  loadgen --targets http://a:8080,http://b:8080 --admin-token T   a running fleet

Add --live to watch the sale in a browser while it runs.

Add --late-commit 300ms to break every lease without a fencing token: lua
and redlock oversell; fenced, etcd, fenced+batch, sql-for-update,
sql-version, sql-atomic, sql-one-trip and redis-decr stay exact. (The crowd grows to 1200 buyers unless --users is given, so
that the sale still sells out behind the held-back commits.)

Add --redis-restart 3 to restart three of the five Redis nodes empty, as a
Redis without persistence comes back from a crash, while a holder holds the
lock: redlock oversells. Add --restart-delay 1s (the TTL) for the delayed
restart Redlock asks for: redlock and fenced are exact again.

Add --failover to run on a replicated Redis of the load generator's own (a
master, one replica and three Sentinels from redis-server and redis-sentinel
on the PATH; without them it exits 1 printing the apt-get line): in each
attack it holds the replica's replication link, SIGKILLs the master right
after it granted the product lock, and the Sentinels promote the replica,
which never heard of that lock; --failovers times per attack. naive and lua
oversell; fenced, redis-decr, redlock, etcd and sql-atomic stay exact.
Unless given: --strategies naive,lua,fenced,redis-decr,redlock,etcd,sql-atomic,
--lock-ttl 12s, --work 3.5s, --stall-rate 0, --stock 3, --users 280, --rate 40,
--duration 30s: a lease and a critical section longer than the promotion,
and about 115 s on a 2-core machine. It cannot be pointed at another
deployment (--targets with --redis-sentinel): it must own the master to
kill it, and SENTINEL FAILOVER, a polite handover in which the replica
catches up first, is not the crash this shows.

Add --cluster-failover for the same on a Redis Cluster of its own (six
redis-server nodes joined by redis-cli: three masters, a replica each),
which the shops use for all but redlock: the master of the product's slot
is killed right after a grant its held replica never got, and the cluster
promotes the replica. The same sale, with redis-queue beside redis-decr.
--redis-cluster puts the embedded shops on a cluster of yours instead.

Add --crash 2 to SIGKILL a shop twice in each attack, at a third and two
thirds of it, and start it again on its port: the shops then run as child
processes of the load generator (its own binary, re-executed), on the same
backends. fenced, sql-atomic, sql-one-trip, redis-decr, redis-queue and
fenced+batch must stay exact: no unit oversold, no order duplicated, every buyer told
201 or 202 with an order row after the drain, and Redis's stock back to
the database's (read for up to 15 s). Unless given: --strategies
fenced,sql-atomic,sql-one-trip,redis-decr,redis-queue,fenced+batch and
--stock 600, so
that the lock-free rows still sell when the kills come. It
cannot be pointed at --targets: it kills only shops it started.

Add --products 20 to sell twenty products at once to the same crowd, each
buyer wanting one drawn from a Zipf law (--skew 1.1: one or two hot, a long
tail cold) and --stock split evenly over them: each product is audited on
its own, the table sums them, and report.md lists every product; with
--redis-cluster, report.md also gives each master's share of each row's
commands.

As a load tester: --rate 300/1s or 50/100ms (Vegeta's form), --users 0
for an open model (a fresh buyer per click until --duration is up),
--count 5 for the median and min–max of five runs of each row, --sweep
250,500,1000,2000 for goodput and p99 against the offered rate, and
--threshold 'p99<200ms' (repeatable) for pass criteria. Compare two runs:
  loadgen compare A/report.json B/report.json

For a crowd bigger than one generator sends, run one part per generator
against the same --targets, with the same flags and --run-id, and merge:
  loadgen --targets T --admin-token A --run-id sale1 --part 1/2 --out p1
  loadgen --targets T --admin-token A --run-id sale1 --part 2/2 --out p2
  loadgen merge --targets T --admin-token A p1/latest p2/latest
Part 1 creates the products and the others wait for them; the merge sums
the answers, takes latencies from every part's samples and audits once.

Exit codes: 0 done; 1 the run failed; 2 bad flags; 3 --fail-on-unsafe and a
strategy that claims to be safe oversold or duplicated; 4 out of file
descriptors (the cause and ulimit -n are printed, and the report keeps
what was measured before); 99 a --threshold failed (3 wins when both
apply).

Every flag can also be set by its environment variable, LOADGEN_ and the
flag's name in capitals (--max-in-flight: LOADGEN_MAX_IN_FLIGHT); a flag on
the command line wins.

Flags:
`
