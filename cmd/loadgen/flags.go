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
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/flagenv"
	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/strategy"
)

// config is everything the command line says.
type config struct {
	settings     scenario.Settings
	targets      []string // empty: start the embedded fleet
	adminToken   string
	naiveExpiry  bool               // --naive-expiry: the embedded shops' sweep reads, then writes without the compare-and-set
	clockAhead   time.Duration      // --clock-ahead: shop 1's own clock runs this far ahead
	buyerSecret  string             // the shops' key for buyer tokens; the crowd signs with it
	redis        []string           // external nodes, for --redlock-kill and --redis-restart
	etcd         []string           // an external etcd cluster, for the embedded shops
	zookeeper    []string           // a ZooKeeper ensemble, for the embedded shops
	startZK      bool               // start a local ensemble for the zookeeper row
	probeZK      bool               // ask the --targets fleet whether it has an ensemble (skipWithoutEnsemble)
	skipped      []scenario.Skipped // rows asked for that cannot run here: the zookeeper row without an ensemble
	cluster      []string           // a Redis Cluster, for the embedded shops' single-node roles
	mysqlDSN     string             // a real database for the embedded shops
	out          string
	wide         bool // --wide: the terminal gets every column and whole lines
	failOnUnsafe bool
	calibrate    bool
	live         string        // the live page's address; empty: no live page
	sentinels    []string      // --redis-sentinel: refused with --failover (fault.SentinelFailover)
	cpuProfile   string        // --cpuprofile: where the run's CPU profile goes
	faults       []fault.Fault // every kind, on or not: their flags (settings.Faults has those on)
	loadFlags
	partFlags
	flags map[string]string // every flag's value, for report.json
}

// defaultLiveAddr is where --live serves its page: loopback, a free port.
const defaultLiveAddr = "127.0.0.1:0"

// errUsage marks a command line that makes no sense: exit code 2.
var errUsage = errors.New("bad flags")

// parseFlags parses args. It returns flag.ErrHelp after printing the help
// to stdout, and an error wrapping errUsage for a command line that makes
// no sense, before anything has started.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	d := scenario.DefaultSettings()
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	var strategies, targets, redis, etcd, zookeeper string
	fs.StringVar(&strategies, "strategies", joinStrategies(d.Strategies), "rows to run, one strategy each, in order, comma-separated: "+scenario.StrategyList())
	fs.StringVar(&strategies, "modes", joinStrategies(d.Strategies), "the older name of --strategies")
	fs.IntVar(&c.settings.Users, "users", d.Users, fmt.Sprintf("distinct buyers in the crowd, 0 for an open model (a fresh buyer for every click, at --rate, until --duration is up); with --late-commit, %d unless given (its held-back commits hold the hot row for seconds: a smaller crowd may not sell the stock out, and a lost update shows as oversold only once it has)", scenario.LateCommitUsers))
	fs.IntVar(&c.settings.Stock, "stock", d.Stock, "units of the product on sale; with --products, of all the products together, split evenly (the remainder a unit each to the hottest)")
	fs.IntVar(&c.settings.Products, "products", d.Products, "products each row sells at once, a catalogue: each buyer wants one, drawn by --skew from --seed; every figure is audited per product and summed, and report.md lists each product (1: one product, as without)")
	fs.Float64Var(&c.settings.Skew, "skew", d.Skew, "with --products, the Zipf exponent that spreads the buyers: product k is wanted in proportion to 1/k^skew, so 1.1 sends about a third of the crowd to the hottest of 20 products and about 1% to the coldest; 0 spreads them evenly")
	fs.IntVar(&c.settings.Clicks, "clicks", d.Clicks, "each buyer clicks 1..N times within a few ms (the repeated clicks the dedupe lock must absorb)")
	addLoadFlags(fs, &c, d)
	addPartFlags(fs, &c)
	fs.DurationVar(&c.settings.Duration, "duration", d.Duration, "longest an attack may last; it ends sooner once every buyer has clicked; with --users 0, how long the attack lasts")
	fs.DurationVar(&c.settings.LockTTL, "lock-ttl", d.LockTTL, "product lock TTL")
	fs.DurationVar(&c.settings.Work, "work", d.Work, "simulated business latency inside the critical section")
	fs.DurationVar(&c.settings.Stall, "stall", d.Stall, "a rare pause inside the critical section (GC, slow payment); above --lock-ttl it breaks the naive lock")
	fs.Float64Var(&c.settings.StallRate, "stall-rate", d.StallRate, "probability that one critical section stalls")
	fs.Uint64Var(&c.settings.Seed, "seed", d.Seed, "seed of the crowd: who clicks how often, in which order, on which shop, and with --products which product each buyer wants")
	fs.DurationVar(&c.settings.LateCommit, "late-commit", d.LateCommit, "hold back the commit and the lock renewals of some orders this long after their statements ran, then commit regardless of the lock (a commit on the wire when the network stalls); above --lock-ttl it breaks lua and redlock (default 0: off)")
	fs.IntVar(&c.settings.LateCommitEvery, "late-commit-every", d.LateCommitEvery, "with --late-commit, which orders commit late: in each shop, the first to reach its commit, then every Nth")
	fs.Float64Var(&c.settings.Pay, "pay", 0, "with --pay-within, the share of the winners (201s, and 202s once their order is written) that pay for their order, each after a delay drawn within the window; the rest never pay, and their units go back on sale when the shops' sweeps expire their orders (default 0: nobody pays)")
	fs.DurationVar(&c.settings.PayWithin, "pay-within", 0, "the products' pay window (pay_within_ms): an order is pending until paid, and expires, its unit back on sale, when the window passes by the database's clock. The crowd is the second wave: it must keep coming for twice the window (raise --users and --duration, or lower --rate) so that returned units sell again. A row whose shop refuses the pay window is skipped with the shop's reason (default 0: orders final at once)")
	fs.BoolVar(&c.naiveExpiry, "naive-expiry", false, "with --pay-within, give the embedded shops the textbook's broken sweep of unpaid orders: it reads the orders due by the shop's own clock, then writes each expired and returns its unit with no compare-and-set, so a shop whose clock runs ahead (--clock-ahead) expires orders still payable, a payment between the read and the write is overwritten, and two sweeps may return one unit twice (docs/unpaid-order.md); not with --targets or --crash")
	fs.DurationVar(&c.clockAhead, "clock-ahead", 0, "with --pay-within, run shop 1's own clock this far ahead of the other shops': the sweep of unpaid orders ignores it (the database's clock decides), the naive one (--naive-expiry) expires orders that much early, while their buyers may still pay (docs/unpaid-order.md); not with --targets or --crash")
	fs.BoolVar(&c.settings.LatePay, "late-pay", false, "with --pay-within, send every payment right at or just after its order's deadline (10 ms before to 40 ms after): the payment that races its expiry must end paid or expired, never both")
	fs.IntVar(&c.settings.Batch, "batch", d.Batch, "in the +batch rows, the most queued buyers one holder of the product lock serves in one transaction")
	fs.IntVar(&c.settings.Buckets, "buckets", d.Buckets, "split the sql-atomic rows' stock over K rows (1: one row, as without); a row named sql-atomic+kK has its own K")
	c.faults = fault.Kinds()
	for _, f := range c.faults {
		f.Flags(fs) // each fault's own: --crash, --failover, --redis-restart...
	}
	var sentinels, cluster string
	fs.StringVar(&cluster, "redis-cluster", "", "without --targets: nodes of a Redis Cluster, host:port,... (any of its nodes), on which the embedded shops put lua, naive, fenced, dedupe, redis-decr and redis-queue, each product on its slot's master; redlock stays on --redis or the embedded nodes; --cluster-failover refuses it: it kills only a cluster it started (default none)")
	fs.StringVar(&sentinels, "redis-sentinel", "", "the Sentinels (host:port,...) of a --targets fleet; --failover refuses them: it kills only a master it started (default none)")
	live := fs.Bool("live", false, "serve a live page of the run on loopback (a free port; the address is printed) while it lasts: per strategy, units left, oversold, duplicate orders, 503s, orders/s and latency, updating as the attack goes (default off)")
	fs.StringVar(&c.live, "live-addr", "", "serve the live page on this host:port instead, e.g. 0.0.0.0:8088 to show it to a room; implies --live (default "+defaultLiveAddr+" with --live)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof FILE): without --targets it holds the embedded shops and backends as well as the load generator (default none)")
	fs.StringVar(&c.out, "out", "loadgen-report", "folder for the reports; each run writes a timestamped subfolder")
	fs.BoolVar(&c.wide, "wide", false, fmt.Sprintf("print every column of report.md's table and whole why-lines to the terminal, as wide as they need; without it the terminal fits %d columns: strategy, sold (201 and 202), oversold, dup_orders, consistent, orders/s, p99 and errors, each why-line cut at a word with an ellipsis (report.md always has every column and whole lines) (default off)", report.TerminalWidth))
	fs.BoolVar(&c.failOnUnsafe, "fail-on-unsafe", false, "exit 3 if a strategy that claims to be safe oversold, duplicated an order or drifted from Redis: every one but off and naive, and under --late-commit only fenced, etcd and zookeeper (fenced and etcd batched or not), sql-for-update, sql-version, sql-atomic, sql-one-trip, redis-decr and redis-queue; also a row with an order answered 201 or 202 that was not written, or a queue that did not drain (default off: report only)")
	fs.BoolVar(&c.calibrate, "calibrate", false, "measure the highest rate this machine's load generator sustains against a trivial local endpoint, print it, and exit (default off)")
	fs.StringVar(&targets, "targets", "", "shop base URLs, comma-separated (default none: start the embedded fleet)")
	fs.StringVar(&c.adminToken, "admin-token", "", "admin token of the --targets shops, to create products and read audits (default none: the embedded shops make their own)")
	fs.StringVar(&c.buyerSecret, "buyer-secret", "", "the key the shops check buyers' tokens with (shop --buyer-secret), at least 16 bytes; every click then carries its buyer's X-Buyer-Token, signed with it: without --targets the embedded shops require them, with --targets it must be the fleet's own; prefer the variable, which ps does not show (default none: the shops run open and clicks carry no token)")
	fs.StringVar(&redis, "redis", "", "Redis nodes host:port,... (five for redlock): with --targets, the fleet's nodes, for --redlock-kill (paused with CLIENT PAUSE <ms> ALL, they resume by themselves) and --redis-restart; without, the embedded shops use them instead of in-process nodes (through proxies of the load generator's own with --redis-restart) (default none)")
	fs.StringVar(&etcd, "etcd", "", "without --targets: an etcd cluster for the embedded shops' etcd strategy, host:port or http://host:port,... (default none: a three-member cluster in process)")
	fs.StringVar(&zookeeper, "zookeeper", "", "without --targets: a ZooKeeper ensemble for the embedded shops' zookeeper strategy, host:port,... (default none: the load generator starts a three-member ensemble for the zookeeper row where java and Debian's zookeeper are installed, and shows the row as skipped where they are not)")
	fs.Var(&c.settings.RTT, "rtt", "without --targets: a simulated round-trip time on every link from the embedded shops (and any shop process the run starts) to their backends: the database, each Redis node, each etcd and ZooKeeper member, e.g. 1ms; or per link, db=2ms,redis=0.5ms (links: db, redis, etcd, zookeeper; a link not named gets none); each chunk waits its own delay, so pipelined requests are not serialised; the load generator's own audits and faults go direct; 0: none, loopback as it is")
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
	was := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { was[f.Name] = true })
	given := func(name string) bool { return was[name] }
	if len(c.sweep) > 0 {
		c.settings = c.settings.ForSweep(given)
	}
	if c.settings.LateCommit > 0 && !given("users") {
		c.settings.Users = scenario.LateCommitUsers
	}
	// The sale a fault needs, unless given: set through the flags, which
	// write the settings and --strategies.
	var bad []string
	for _, d := range fault.Defaults(c.faults) {
		if given(d.Flag) {
			continue
		}
		if err := fs.Set(d.Flag, d.Value); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", d.Flag, err))
		}
	}
	for _, m := range split(strategies) {
		strategy, err := scenario.ParseStrategy(m)
		if err != nil {
			bad = append(bad, fmt.Sprintf("strategies: %v", err))
			continue
		}
		c.settings.Strategies = append(c.settings.Strategies, strategy)
	}
	unknownMode := len(bad) > 0
	if *live && c.live == "" {
		c.live = defaultLiveAddr
	}
	c.targets, c.redis, c.etcd, c.sentinels, c.cluster = split(targets), split(redis), split(etcd), split(sentinels), split(cluster)
	c.zookeeper = split(zookeeper)
	bad = append(bad, checkZooKeeper(&c, zookeeper, strategies == joinStrategies(d.Strategies))...)
	if cluster != "" && len(c.cluster) == 0 {
		bad = append(bad, fmt.Sprintf("redis-cluster: %q: no address in it", cluster))
	}
	for _, f := range c.faults {
		if f.On() {
			c.settings.Faults = append(c.settings.Faults, f)
		}
	}
	bad = append(bad, c.check()...)
	bad = append(bad, c.checkLoad(given)...)
	bad = append(bad, c.checkPart()...)
	for _, p := range c.settings.Problems() {
		if unknownMode && strings.HasPrefix(p, "strategies:") {
			continue // already said which strategy is unknown
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
		bad = append(bad, "admin-token: required with --targets (the run creates a product per strategy and reads its audit)")
	}
	if len(c.targets) == 0 && c.adminToken != "" {
		bad = append(bad, "admin-token: only with --targets; the embedded shops make their own")
	}
	if c.naiveExpiry && (c.settings.PayWithin == 0 || len(c.targets) > 0 || crashes(c.settings.Faults)) {
		bad = append(bad, "naive-expiry: needs --pay-within, and the in-process shops (not with --targets or --crash)")
	}
	if c.clockAhead != 0 && (c.settings.PayWithin == 0 || len(c.targets) > 0 || crashes(c.settings.Faults)) {
		bad = append(bad, "clock-ahead: needs --pay-within, and the in-process shops (not with --targets or --crash)")
	}
	if c.buyerSecret != "" && len(c.buyerSecret) < buyertoken.MinSecretLen {
		bad = append(bad, fmt.Sprintf("buyer-secret: %d bytes, want at least %d", len(c.buyerSecret), buyertoken.MinSecretLen))
	}
	if len(c.targets) > 0 && !c.settings.RTT.IsZero() {
		bad = append(bad, "rtt: only without --targets; give a running fleet's shops their own --rtt")
	}
	if len(c.targets) > 0 && c.mysqlDSN != "" {
		bad = append(bad, "mysql-dsn: only without --targets; a running fleet has its own database")
	}
	for _, a := range c.redis {
		if err := app.CheckRedisAddr(a); err != nil {
			bad = append(bad, fmt.Sprintf("redis: %q: want host:port", a))
		}
	}
	for _, e := range c.etcd {
		if err := app.CheckEtcdEndpoint(e); err != nil {
			bad = append(bad, fmt.Sprintf("etcd: %q: want host:port or http://host:port", e))
		}
	}
	if len(c.targets) > 0 && len(c.etcd) > 0 {
		bad = append(bad, "etcd: only without --targets; a running fleet has its own cluster")
	}
	for _, a := range c.cluster {
		if err := app.CheckRedisAddr(a); err != nil {
			bad = append(bad, fmt.Sprintf("redis-cluster: %q: want host:port", a))
		}
	}
	if len(c.targets) > 0 && len(c.cluster) > 0 {
		bad = append(bad, "redis-cluster: only without --targets; a running fleet has its own Redis")
	}
	if len(c.cluster) > 0 && len(c.sentinels) > 0 {
		bad = append(bad, "redis-cluster: not with --redis-sentinel: both name the Redis of the single-node roles")
	}
	var rows, bucketed []strategy.Name
	for _, m := range c.settings.Strategies {
		rows = append(rows, m.Name())
		if m.Buckets() > 0 {
			bucketed = append(bucketed, m.Name())
		}
	}
	return append(bad, fault.Problems(c.faults, fault.Plan{Rows: rows, Bucketed: bucketed, Targets: len(c.targets) > 0,
		Redis: len(c.redis), Etcd: len(c.etcd) > 0, Sentinels: len(c.sentinels) > 0, Cluster: len(c.cluster) > 0,
		ZooKeeper: len(c.zookeeper) > 0, Sweep: len(c.sweep) > 0})...)
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

func joinStrategies(ms []scenario.Strategy) string {
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
	for _, secret := range []string{"admin-token", "buyer-secret"} {
		if out[secret] != "" {
			out[secret] = "(given, not recorded)"
		}
	}
	if user, rest, ok := strings.Cut(out["mysql-dsn"], "@"); ok && strings.Contains(user, ":") {
		name, _, _ := strings.Cut(user, ":")
		out["mysql-dsn"] = name + ":***@" + rest
	}
	return out
}

// crashes reports whether faults has --crash on.
func crashes(faults []fault.Fault) bool {
	for _, f := range faults {
		if _, ok := f.(*fault.ShopCrash); ok {
			return true
		}
	}
	return false
}
