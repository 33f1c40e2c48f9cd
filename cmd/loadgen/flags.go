package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/fault"
	"github.com/flashsale/flashsale/internal/flagenv"
	"github.com/flashsale/flashsale/internal/report"
	"github.com/flashsale/flashsale/internal/scenario"
	"github.com/flashsale/flashsale/internal/strategy"
)

// config is everything the command line says.
type config struct {
	settings     scenario.Settings
	targets      []string // empty: start the embedded fleet
	adminToken   string
	redis        []string // external nodes, for --redlock-kill and --redis-restart
	etcd         []string // an external etcd cluster, for the embedded shops
	mysqlDSN     string   // a real database for the embedded shops
	out          string
	wide         bool // --wide: the terminal gets every column and whole lines
	failOnUnsafe bool
	calibrate    bool
	live         string   // the live page's address; empty: no live page
	failover     bool     // start a Sentinel set of our own and kill its master
	sentinels    []string // --redis-sentinel: refused with --failover (see check)
	cpuProfile   string   // --cpuprofile: where the run's CPU profile goes
	loadFlags
	flags map[string]string // every flag's value, for report.json
}

// defaultLiveAddr is where --live serves its page: loopback, a free port.
const defaultLiveAddr = "127.0.0.1:0"

// errUsage marks a command line that makes no sense: exit code 2.
var errUsage = errors.New("bad flags")

const usageHeader = `loadgen runs the 双11 flash sale once per strategy and prints, side by side,
what each did: orders, oversold units, duplicate orders, throughput and
latency. The strategies: off, naive, lua and redlock lock the stock with Redis
(the first two to show how locks fail); fenced adds a fencing token the
database checks; etcd takes that fenced lock from a consensus cluster;
sql-for-update and sql-version lock in the database (its row lock, and a
version compared with the write); sql-atomic and redis-decr take no lock,
as production flash sales do;
fenced+batch lets one holder of the lock serve every buyer its shop
has queued in one transaction. With no flags it starts everything it needs in
process (five embedded Redis nodes, a three-member etcd cluster, a SQLite
file, three shops on loopback ports).

Usage:
  loadgen [flags]                                          embedded, no set-up
  loadgen --targets http://a:8080,http://b:8080 --admin-token T   a running fleet

Add --live to watch the sale in a browser while it runs.

Add --late-commit 300ms to break every lease without a fencing token: lua
and redlock oversell; fenced, etcd, fenced+batch, sql-for-update,
sql-version, sql-atomic and redis-decr stay exact. (The crowd grows to 1200 buyers unless --users is given, so
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
Unless given: --modes naive,lua,fenced,redis-decr,redlock,etcd,sql-atomic,
--lock-ttl 12s, --work 3.5s, --stall-rate 0, --stock 3, --users 280, --rate 40,
--duration 30s: a lease and a critical section longer than the promotion,
and about 115 s on a 2-core machine. It cannot be pointed at another
deployment (--targets with --redis-sentinel): it must own the master to
kill it, and SENTINEL FAILOVER, a polite handover in which the replica
catches up first, is not the crash this shows.

Add --crash 2 to SIGKILL a shop twice in each attack, at a third and two
thirds of it, and start it again on its port: the shops then run as child
processes of the load generator (its own binary, re-executed), on the same
backends. fenced, sql-atomic, redis-decr, redis-queue and fenced+batch
must stay exact: no unit oversold, no order duplicated, every buyer told
201 or 202 with an order row after the drain, and Redis's stock back to
the database's (read for up to 15 s). Unless given: --modes
fenced,sql-atomic,redis-decr,redis-queue,fenced+batch and --stock 600, so
that the lock-free rows still sell when the kills come. It
cannot be pointed at --targets: it kills only shops it started.

As a load tester: --rate 300/1s or 50/100ms (Vegeta's form), --users 0
for an open model (a fresh buyer per click until --duration is up),
--count 5 for the median and min–max of five runs of each row, --sweep
250,500,1000,2000 for goodput and p99 against the offered rate, and
--threshold 'p99<200ms' (repeatable) for pass criteria. Compare two runs:
  loadgen compare A/report.json B/report.json

Exit codes: 0 done; 1 the run failed; 2 bad flags; 3 --fail-on-unsafe and a
strategy that claims to be safe oversold or duplicated; 99 a --threshold
failed (3 wins when both apply).

Every flag can also be set by its environment variable, LOADGEN_ and the
flag's name in capitals (--max-in-flight: LOADGEN_MAX_IN_FLIGHT); a flag on
the command line wins.

Flags:
`

// parseFlags parses args. It returns flag.ErrHelp after printing the help
// to stdout, and an error wrapping errUsage for a command line that makes
// no sense, before anything has started.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	d := scenario.DefaultSettings()
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	var modes, targets, redis, etcd string
	fs.StringVar(&modes, "modes", joinModes(d.Modes), "rows to run, in order, comma-separated: "+scenario.ModeList())
	fs.IntVar(&c.settings.Users, "users", d.Users, fmt.Sprintf("distinct buyers in the crowd, 0 for an open model (a fresh buyer for every click, at --rate, until --duration is up); with --late-commit, %d unless given (its held-back commits hold the hot row for seconds: a smaller crowd may not sell the stock out, and a lost update shows as oversold only once it has)", scenario.LateCommitUsers))
	fs.IntVar(&c.settings.Stock, "stock", d.Stock, "units of the product on sale")
	fs.IntVar(&c.settings.Clicks, "clicks", d.Clicks, "each buyer clicks 1..N times within a few ms (the repeated clicks the dedupe lock must absorb)")
	addLoadFlags(fs, &c, d)
	fs.DurationVar(&c.settings.Duration, "duration", d.Duration, "longest an attack may last; it ends sooner once every buyer has clicked; with --users 0, how long the attack lasts")
	fs.DurationVar(&c.settings.LockTTL, "lock-ttl", d.LockTTL, "product lock TTL")
	fs.DurationVar(&c.settings.Work, "work", d.Work, "simulated business latency inside the critical section")
	fs.DurationVar(&c.settings.Stall, "stall", d.Stall, "a rare pause inside the critical section (GC, slow payment); above --lock-ttl it breaks the naive lock")
	fs.Float64Var(&c.settings.StallRate, "stall-rate", d.StallRate, "probability that one critical section stalls")
	fs.Uint64Var(&c.settings.Seed, "seed", d.Seed, "seed of the crowd: who clicks how often, in which order, on which shop")
	fs.DurationVar(&c.settings.LateCommit, "late-commit", d.LateCommit, "hold back the commit and the lock renewals of some orders this long after their statements ran, then commit regardless of the lock (a commit on the wire when the network stalls); above --lock-ttl it breaks lua and redlock (default 0: off)")
	fs.IntVar(&c.settings.LateCommitEvery, "late-commit-every", d.LateCommitEvery, "with --late-commit, which orders commit late: in each shop, the first to reach its commit, then every Nth")
	fs.IntVar(&c.settings.Batch, "batch", d.Batch, "in the +batch rows, the most queued buyers one holder of the product lock serves in one transaction")
	fs.IntVar(&c.settings.RedlockKill, "redlock-kill", d.RedlockKill, "stop N of the 5 Redis nodes halfway through the redlock attack, and bring them back after it (default 0: none)")
	fs.IntVar(&c.settings.RedisRestart, "redis-restart", d.RedisRestart, fmt.Sprintf("restart N of the 5 Redis nodes empty (no persistence) in the redlock and fenced attacks, as soon as a holder is seen taking the lock: embedded nodes are closed and replaced by empty ones on the same port; --redis nodes of the embedded shops are reached through the load generator's own proxies, which drop the shops' connections, and lose the product's keys; --redis nodes of a --targets fleet lose the product's keys and every client connection (CLIENT KILL TYPE normal and pubsub). Unless given, --lock-ttl %v, --work %v, --stall-rate 0 and --stock %d, so that the restart lands inside a critical section every run (default 0: none)", fault.RestartLockTTL, fault.RestartWork, fault.RestartStock))
	fs.DurationVar(&c.settings.RestartDelay, "restart-delay", d.RestartDelay, "with --redis-restart, how long the restarted nodes stay down before they serve again, empty (a --targets fleet's nodes are held with CLIENT PAUSE <ms> ALL); at least --lock-ttl is Redlock's delayed restart (default 0: at once)")
	fs.IntVar(&c.settings.EtcdKill, "etcd-kill", d.EtcdKill, "stop N of the 3 embedded etcd members halfway through the etcd attack, and bring them back after it (default 0: none)")
	fs.BoolVar(&c.failover, "failover", false, "start a master, a replica and three Sentinels (redis-server and redis-sentinel on the PATH) for the shops' single-node locks and stock, and in each attack kill the master right after it granted a lock its held replica never got; see above for the settings it changes unless given (default off)")
	fs.IntVar(&c.settings.Failovers, "failovers", fault.DefaultFailovers, "with --failover, how many times each attack kills the master")
	fs.IntVar(&c.settings.Crash, "crash", d.Crash, crashUsage)
	var sentinels string
	fs.StringVar(&sentinels, "redis-sentinel", "", "the Sentinels (host:port,...) of a --targets fleet; --failover refuses them: it kills only a master it started (default none)")
	live := fs.Bool("live", false, "serve a live page of the run on loopback (a free port; the address is printed) while it lasts: per strategy, units left, oversold, duplicate orders, 503s, orders/s and latency, updating as the attack goes (default off)")
	fs.StringVar(&c.live, "live-addr", "", "serve the live page on this host:port instead, e.g. 0.0.0.0:8088 to show it to a room; implies --live (default "+defaultLiveAddr+" with --live)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof FILE): without --targets it holds the embedded shops and backends as well as the load generator (default none)")
	fs.StringVar(&c.out, "out", "loadgen-report", "folder for the reports; each run writes a timestamped subfolder")
	fs.BoolVar(&c.wide, "wide", false, fmt.Sprintf("print every column of report.md's table and whole why-lines to the terminal, as wide as they need; without it the terminal fits %d columns: mode, sold (201 and 202), oversold, dup_orders, consistent, orders/s, p99 and errors, each why-line cut at a word with an ellipsis (report.md always has every column and whole lines) (default off)", report.TerminalWidth))
	fs.BoolVar(&c.failOnUnsafe, "fail-on-unsafe", false, "exit 3 if a strategy that claims to be safe oversold, duplicated an order or drifted from Redis: every one but off and naive, and under --late-commit only fenced and etcd (batched or not), sql-for-update, sql-version, sql-atomic, redis-decr and redis-queue; also a row with an order answered 201 or 202 that was not written, or a queue that did not drain (default off: report only)")
	fs.BoolVar(&c.calibrate, "calibrate", false, "measure the highest rate this machine's load generator sustains against a trivial local endpoint, print it, and exit (default off)")
	fs.StringVar(&targets, "targets", "", "shop base URLs, comma-separated (default none: start the embedded fleet)")
	fs.StringVar(&c.adminToken, "admin-token", "", "admin token of the --targets shops, to create products and read audits (default none: the embedded shops make their own)")
	fs.StringVar(&redis, "redis", "", "Redis nodes host:port,... (five for redlock): with --targets, the fleet's nodes, for --redlock-kill (paused with CLIENT PAUSE <ms> ALL, they resume by themselves) and --redis-restart; without, the embedded shops use them instead of in-process nodes (through proxies of the load generator's own with --redis-restart) (default none)")
	fs.StringVar(&etcd, "etcd", "", "without --targets: an etcd cluster for the embedded shops' etcd strategy, host:port or http://host:port,... (default none: a three-member cluster in process)")
	fs.StringVar(&c.mysqlDSN, "mysql-dsn", "", "without --targets: a MySQL/MariaDB database for the embedded shops, user:pass@tcp(host:3306)/dbname (default none: a SQLite file in a temp dir)")
	c.settings.ClickWindow = d.ClickWindow

	if err := flagenv.SetFromEnv(fs, envPrefix, os.Getenv); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageHeader)
			flagenv.PrintFlags(stdout, fs, envPrefix, nil)
			return c, err
		}
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(c.sweep) > 0 {
		c.settings = c.settings.ForSweep(func(name string) bool { return given(fs, name) })
	}
	if c.settings.LateCommit > 0 && !given(fs, "users") {
		c.settings.Users = scenario.LateCommitUsers
	}
	if c.settings.RedisRestart > 0 {
		c.settings = c.settings.ForRestart(func(name string) bool { return given(fs, name) })
	}
	failoversGiven := given(fs, "failovers")
	if !c.failover {
		c.settings.Failovers = 0
	}
	var bad []string
	if c.failover {
		c.settings = c.settings.ForFailover(func(name string) bool { return given(fs, name) })
		if !given(fs, "modes") {
			modes = joinModes(c.settings.Modes)
		}
		c.settings.Modes = nil // parsed below
	}
	if c.settings.Crash > 0 {
		c.settings = c.settings.ForCrash(func(name string) bool { return given(fs, name) })
		if !given(fs, "modes") {
			modes = joinModes(c.settings.Modes)
		}
		c.settings.Modes = nil // parsed below
	}
	if failoversGiven && !c.failover {
		bad = append(bad, "failovers: only with --failover")
	}
	for _, m := range split(modes) {
		mode, err := scenario.ParseMode(m)
		if err != nil {
			bad = append(bad, fmt.Sprintf("modes: %v", err))
			continue
		}
		c.settings.Modes = append(c.settings.Modes, mode)
	}
	unknownMode := len(bad) > 0
	if *live && c.live == "" {
		c.live = defaultLiveAddr
	}
	c.targets, c.redis, c.etcd, c.sentinels = split(targets), split(redis), split(etcd), split(sentinels)
	bad = append(bad, c.check()...)
	bad = append(bad, c.checkCrash()...)
	bad = append(bad, c.checkLoad(func(name string) bool { return given(fs, name) })...)
	for _, p := range c.settings.Problems() {
		if unknownMode && strings.HasPrefix(p, "modes:") {
			continue // already said which mode is unknown
		}
		bad = append(bad, p)
	}
	if fs.NArg() > 0 {
		bad = append(bad, fmt.Sprintf("unexpected arguments %q: every setting is a flag", fs.Args()))
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%w:\n  %s", errUsage, strings.Join(dedupe(bad), "\n  "))
	}
	c.flags = flagValues(fs)
	return c, nil
}

// check validates what Settings.Validate does not know about: targets,
// token and Redis addresses.
func (c *config) check() []string {
	var bad []string
	for _, t := range c.targets {
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad = append(bad, fmt.Sprintf("targets: %q is not a base URL like http://127.0.0.1:8080", t))
		}
	}
	if len(c.targets) > 0 && c.adminToken == "" {
		bad = append(bad, "admin-token: required with --targets (the run creates a product per mode and reads its audit)")
	}
	if len(c.targets) == 0 && c.adminToken != "" {
		bad = append(bad, "admin-token: only with --targets; the embedded shops make their own")
	}
	if len(c.targets) > 0 && c.mysqlDSN != "" {
		bad = append(bad, "mysql-dsn: only without --targets; a running fleet has its own database")
	}
	for _, a := range c.redis {
		if err := app.CheckRedisAddr(a); err != nil {
			bad = append(bad, fmt.Sprintf("redis: %q: want host:port", a))
		}
	}
	kill := c.settings.RedlockKill
	if kill > 0 && !slices.ContainsFunc(c.settings.Modes, func(m scenario.Mode) bool { return m.Strategy() == strategy.Redlock }) && len(c.settings.Modes) > 0 {
		bad = append(bad, "redlock-kill: needs redlock in --modes")
	}
	if kill > 0 && (len(c.targets) > 0 || len(c.redis) > 0) && len(c.redis) < kill {
		bad = append(bad, fmt.Sprintf("redlock-kill: %d nodes to stop, but --redis names %d; with --targets, give the fleet's five Redis nodes in --redis", kill, len(c.redis)))
	}
	if r := c.settings.RedisRestart; r > 0 {
		switch {
		case len(c.targets) > 0 && len(c.redis) == 0:
			bad = append(bad, "redis-restart: --redis is missing: with --targets, give the fleet's five Redis nodes in --redis (the load generator drops their clients and the product's keys)")
		case len(c.redis) > 0 && len(c.redis) < r:
			bad = append(bad, fmt.Sprintf("redis-restart: %d nodes to restart, but --redis names %d", r, len(c.redis)))
		}
	}
	switch {
	case c.failover && len(c.sentinels) > 0:
		bad = append(bad, "failover: not with --redis-sentinel: the load generator kills only a master it started (SENTINEL FAILOVER would be a polite handover, not the crash --failover shows); drop --targets and --redis-sentinel")
	case c.failover && len(c.targets) > 0:
		bad = append(bad, "failover: --redis-sentinel is missing: with --targets the load generator knows no Sentinels (and would refuse them: it kills only a master it started; drop --targets)")
	case len(c.sentinels) > 0:
		bad = append(bad, "redis-sentinel: only with --failover, which refuses it (see --help)")
	}
	for _, e := range c.etcd {
		if err := app.CheckEtcdEndpoint(e); err != nil {
			bad = append(bad, fmt.Sprintf("etcd: %q: want host:port or http://host:port", e))
		}
	}
	if len(c.targets) > 0 && len(c.etcd) > 0 {
		bad = append(bad, "etcd: only without --targets; a running fleet has its own cluster")
	}
	if k := c.settings.EtcdKill; k > 0 {
		if !slices.ContainsFunc(c.settings.Modes, func(m scenario.Mode) bool { return m.Strategy() == strategy.Etcd }) && len(c.settings.Modes) > 0 {
			bad = append(bad, "etcd-kill: needs etcd in --modes")
		}
		if len(c.targets) > 0 || len(c.etcd) > 0 {
			bad = append(bad, "etcd-kill: only with the embedded etcd cluster (no --targets, no --etcd): the load generator stops its members")
		}
	}
	return bad
}

// given reports whether the command line set the flag called name.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// split splits a comma-separated list, dropping blanks.
func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func joinModes(ms []scenario.Mode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ",")
}

// dedupe drops repeated messages, keeping the first of each.
func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// flagValues is every flag's value after parsing, defaults included, as
// report.json records them.
func flagValues(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { out[f.Name] = f.Value.String() })
	if out["admin-token"] != "" {
		out["admin-token"] = "(given, not recorded)"
	}
	if user, rest, ok := strings.Cut(out["mysql-dsn"], "@"); ok && strings.Contains(user, ":") {
		name, _, _ := strings.Cut(user, ":")
		out["mysql-dsn"] = name + ":***@" + rest
	}
	return out
}
