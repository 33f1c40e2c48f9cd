package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/flagenv"
	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/order"
)

// options are the parsed command line.
type options struct {
	addr            string
	mysqlDSN        string
	redis           string
	redisSentinel   string
	redisMaster     string
	redisCluster    string
	etcd            string
	zookeeper       string
	rtt             netsim.RTT
	adminToken      string
	lockWait        time.Duration
	maxInFlight     int
	buyerRate       float64
	buyerBurst      int
	shutdownTimeout time.Duration
	logFormat       string
	logLevel        string
	pprof           string
}

// usageError is a bad flag or environment value: main prints it and exits
// with status 2, as the flag package does.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// envPrefix starts every flag's environment variable: --lock-wait is
// SHOP_LOCK_WAIT (package flagenv).
const envPrefix = "SHOP"

// flagSpec ties a flag to its environment variable and its help line; env
// is flagenv.EnvName(envPrefix, name), spelt out for the reader.
type flagSpec struct {
	name, env, usage string
}

var flagSpecs = []flagSpec{
	{"addr", "SHOP_ADDR", "listen address, host:port (port 0 picks a free port)"},
	{"mysql-dsn", "SHOP_MYSQL_DSN", "MySQL/MariaDB DSN, user:pass@tcp(host:3306)/dbname; empty: embedded SQLite file in a temp dir"},
	{"redis", "SHOP_REDIS", "Redis nodes, host:port,... (five independent masters for redlock; the first also serves lua, naive, fenced, dedupe, redis-decr and redis-queue unless --redis-sentinel or --redis-cluster is given); every shop on one database needs the same nodes, the same one first; empty: five embedded in-process servers, this process's own (with --redis-sentinel or --redis-cluster too: then only redlock uses them)"},
	{"redis-sentinel", "SHOP_REDIS_SENTINEL", "Redis Sentinels, host:port,..., that manage the master named by --redis-master (give both or neither); that master serves lua, naive, fenced, dedupe and redis-decr instead of the first --redis node, and the shop follows it to the replica the Sentinels promote; redlock stays on --redis; every shop on one database needs the same Sentinels and master; empty: none"},
	{"redis-master", "SHOP_REDIS_MASTER", "the name the --redis-sentinel Sentinels know the master by (sentinel monitor NAME ...)"},
	{"redis-cluster", "SHOP_REDIS_CLUSTER", "nodes of a Redis Cluster, host:port,... (any of its nodes; the client learns the others), that serve lua, naive, fenced, dedupe, redis-decr and redis-queue instead of the first --redis node, each product on the master of its slot; the shop follows the replicas the cluster promotes; redlock stays on --redis; not with --redis-sentinel; every shop on one database needs the same nodes named; empty: none"},
	{"etcd", "SHOP_ETCD", "etcd members for strategy etcd, host:port or http://host:port,...; every shop on one database needs the same cluster; empty: an embedded three-member cluster, this process's own"},
	{"zookeeper", "SHOP_ZOOKEEPER", "ZooKeeper members for strategy zookeeper, host:port,...; the shop opens its session at start and refuses to start without one; every shop on one database needs the same ensemble; empty: none, and zookeeper products cannot be sold"},
	{"rtt", "SHOP_RTT", "a simulated round-trip time on every link from this shop to its backends (the database, each Redis node, each etcd and ZooKeeper member), e.g. 1ms; or per link, db=2ms,redis=0.5ms (links: db, redis, etcd, zookeeper; a link not named gets none); each chunk waits its own delay, so pipelined requests are not serialised; 0: none, loopback as it is"},
	{"admin-token", "SHOP_ADMIN_TOKEN", "bearer token for the admin routes; empty: closed, except that with the embedded database a random one is generated and logged"},
	{"lock-wait", "SHOP_LOCK_WAIT", "longest an order waits for its product lock before 503 lock_timeout (and at the door, or for a redis-queue order's round trip to Redis, before 503 busy)"},
	{"max-in-flight", "SHOP_MAX_IN_FLIGHT", "orders one shop works on at once; more wait at the door, in arrival order, up to the lock wait, and one that would wait more than half of it for the orders ahead gets 503 busy at once (0: the default; negative: no limit); a batched product's buyers queue in their batch instead, and a redis-queue product's for their shop's next round trip to Redis"},
	{"buyer-rate", "SHOP_BUYER_RATE", "orders per second one buyer (user_id) may send to this shop; the clicks beyond get 429 rate_limited with Retry-After, before they queue (the anti-bot guard; per shop: a buyer spread over k shops gets k times it); 0: no limit"},
	{"buyer-burst", "SHOP_BUYER_BURST", "with --buyer-rate, how many orders one buyer may send at once before the rate applies"},
	{"shutdown-timeout", "SHOP_SHUTDOWN_TIMEOUT", "on SIGINT/SIGTERM, how long in-flight orders may take to finish"},
	{"log-format", "SHOP_LOG_FORMAT", "log format: text or json"},
	{"log-level", "SHOP_LOG_LEVEL", "log level: debug, info, warn or error"},
	{"pprof", "SHOP_PPROF", "serve Go's profiles (net/http/pprof: /debug/pprof/...) on this host:port, a listener of its own, e.g. 127.0.0.1:6060; they show where the shop's CPU and time go, and anyone who reaches them can read its memory and stall it with a profile: keep it on loopback; empty: off"},
}

// parseFlags reads args (without the program name) with the environment
// (getenv) as the fallback for every flag: flag beats environment beats
// default. It returns flag.ErrHelp for -h/--help (after printing the help
// to out) and a *usageError for anything invalid.
func parseFlags(args []string, getenv func(string) string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by main, help by usage below
	fs.StringVar(&o.addr, "addr", ":8080", "")
	fs.StringVar(&o.mysqlDSN, "mysql-dsn", "", "")
	fs.StringVar(&o.redis, "redis", "", "")
	fs.StringVar(&o.redisSentinel, "redis-sentinel", "", "")
	fs.StringVar(&o.redisMaster, "redis-master", "", "")
	fs.StringVar(&o.redisCluster, "redis-cluster", "", "")
	fs.StringVar(&o.etcd, "etcd", "", "")
	fs.StringVar(&o.zookeeper, "zookeeper", "", "")
	fs.Var(&o.rtt, "rtt", "")
	fs.StringVar(&o.adminToken, "admin-token", "", "")
	o.lockWait, o.shutdownTimeout = order.DefaultLockWait, app.DefaultShutdownTimeout
	fs.Var((*durationFlag)(&o.lockWait), "lock-wait", "")
	fs.IntVar(&o.maxInFlight, "max-in-flight", app.DefaultMaxInFlightOrders, "")
	fs.Float64Var(&o.buyerRate, "buyer-rate", 0, "")
	fs.IntVar(&o.buyerBurst, "buyer-burst", 3, "")
	fs.Var((*durationFlag)(&o.shutdownTimeout), "shutdown-timeout", "")
	fs.StringVar(&o.logFormat, "log-format", "text", "")
	fs.StringVar(&o.logLevel, "log-level", "info", "")
	fs.StringVar(&o.pprof, "pprof", "", "")

	names := make([]string, len(flagSpecs))
	for i, spec := range flagSpecs {
		fs.Lookup(spec.name).Usage = spec.usage
		names[i] = spec.name
	}
	if err := flagenv.SetFromEnv(fs, envPrefix, getenv); err != nil {
		return o, usagef("%v", err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(out, fs, names)
			return o, flag.ErrHelp
		}
		// The flag package says "-name"; the help says "--name".
		return o, usagef("%s", strings.Replace(err.Error(), " -", " --", 1))
	}
	if fs.NArg() > 0 {
		return o, usagef("unexpected argument %q: shop takes flags only", fs.Arg(0))
	}
	return o, o.validate()
}

// config is the app.Config the options ask for, logging to log. Every
// value passes through as is: the flags mean what app.Config's fields
// mean (--max-in-flight 0 is the default, negative no limit).
func (o *options) config(log *slog.Logger) app.Config {
	return app.Config{
		MySQLDSN:          o.mysqlDSN,
		RedisAddrs:        o.redisAddrs(),
		RedisMaster:       app.SentinelMaster{Sentinels: splitList(o.redisSentinel), Name: o.redisMaster},
		RedisCluster:      splitList(o.redisCluster),
		EtcdEndpoints:     splitList(o.etcd),
		ZooKeeper:         splitList(o.zookeeper),
		RTT:               o.rtt,
		AdminToken:        o.adminToken,
		LockWait:          o.lockWait,
		MaxInFlightOrders: o.maxInFlight,
		BuyerRate:         o.buyerRate,
		BuyerBurst:        o.buyerBurst,
		ShutdownTimeout:   o.shutdownTimeout,
		Logger:            log,
	}
}

// redisAddrs splits --redis on commas, dropping blanks.
func (o *options) redisAddrs() []string { return splitList(o.redis) }

// splitList splits a comma-separated flag, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// durationFlag is a time.Duration flag whose parse error says what it wants
// (the flag package's own says only "parse error").
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }

func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 5s or 500ms")
	}
	*d = durationFlag(v)
	return nil
}

// usage prints every flag with its environment variable and default, in
// the order of names.
func usage(out io.Writer, fs *flag.FlagSet, names []string) {
	fmt.Fprint(out, `shop: the flash-sale order service (Gin API, MySQL stock, Redis locks).

With no flags it runs on embedded backends — an SQLite file in a temporary
directory, five in-process Redis servers and an embedded three-member etcd
cluster in process (for strategy etcd) —
serves on :8080 at once, and logs a generated admin token. --mysql-dsn,
--redis and --etcd select real servers, each on its own.

--redis-sentinel with --redis-master puts lua, naive, fenced, the dedupe
lock and redis-decr on a Sentinel-managed, replicated master, which
survives the loss of that master (replication is asynchronous: a lock
granted just before a failover can be granted again; that is why redlock
exists). Redlock keeps five independent masters: --redis, or, without it,
five embedded servers of this process's own, as with no flags at all.

--redis-cluster puts them on a Redis Cluster instead: each product's keys
share its hash tag, so they live on the master of its slot, and many
products spread over the masters. Its replication is asynchronous too,
and its masters are no Redlock nodes: they fail over together.

Shops that share a database must share their lock servers, or their locks
exclude nothing and the stock oversells: give every shop on one --mysql-dsn
the same --redis, --redis-sentinel with --redis-master or --redis-cluster,
and --etcd. Each shop records its lock servers in the database, and one
whose servers differ from a live shop's there refuses to start (exit
status 1). A crashed shop stops counting a few seconds after its last
heartbeat.

Usage: shop [flags]

Every flag can also be set by its environment variable; a flag on the
command line wins.

`)
	flagenv.PrintFlags(out, fs, envPrefix, names)
	fmt.Fprint(out, `
Examples:
  shop
  shop --addr :9090 --admin-token s3cret
  shop --mysql-dsn 'root@tcp(127.0.0.1:3306)/flashsale' \
       --redis 127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105
  shop --redis-sentinel 127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381 --redis-master flashsale
  shop --redis-cluster 127.0.0.1:7301,127.0.0.1:7302,127.0.0.1:7303
`)
}
