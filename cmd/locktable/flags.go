package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/flashsale/flashsale/internal/flagenv"
	"github.com/flashsale/flashsale/internal/harness/locktable"
	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/zklock"
)

// envPrefix names the flags' environment variables: LOCKTABLE_REDIS, ...
const envPrefix = "LOCKTABLE"

// The bounds of a run: the command measures servers on this machine, and
// holds its cores while it does, so it refuses a run it cannot finish in
// a few minutes.
const (
	maxWorkers  = 256
	maxDuration = 30 * time.Second
	maxWarmup   = 10 * time.Second
	maxRounds   = 10
	maxRun      = 15 * time.Minute
)

// errUsage is wrapped by every error about the command line.
var errUsage = errors.New("usage")

// config is the command line, checked.
type config struct {
	redis, etcd, zookeeper []string
	mysqlDSN               string
	workers                int
	contenders             []int
	opts                   locktable.Options
	wait, ttl              time.Duration
	rtt                    netsim.RTT // the simulated network between the clients and the servers

	// Not flags: the run's own names, which a test sets to those its
	// backends clean up.
	prefix string // of every Redis and etcd key, and of ZooKeeper's
	zkRoot string // the znode under which the ZooKeeper locks live
	table  string // the row lock's table, created and dropped by the run
}

const usageHeader = `locktable measures acquire-plus-release of every lock backend on this
machine in one run, beside the textbook's throughput table: single Redis
(lua), Redlock over five nodes, etcd, ZooKeeper, and the database's row lock
(SELECT … FOR UPDATE in a transaction; commit releases). Two cases: many
independent keys (what a claimed TPS means), and one hot key with each
number of --contenders. It prints Markdown: ops/s, p50 and p99 per system
and case, the claimed figures and ratios beside them, and the servers'
durability settings with the fsyncs they did meanwhile.

A backend whose flag is not given shows as skipped. Every address must be on
this machine (loopback): the clients share its cores with the servers, and
the run is bounded in time (at most %v) and in cycles per cell. --rtt puts
a simulated network between the clients and every server they measure, as
the shop's --rtt does: each Redis node (single Redis and Redlock), each etcd
member, each ZooKeeper member and the row lock's database is reached through
a loopback proxy that delays every chunk by half the RTT each way.

  locktable --redis 127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203,127.0.0.1:7204,127.0.0.1:7205 \
    --etcd 127.0.0.1:23801,127.0.0.1:23802,127.0.0.1:23803 \
    --zookeeper 127.0.0.1:22181,127.0.0.1:22182,127.0.0.1:22183 \
    --mysql-dsn 'root@tcp(127.0.0.1:3306)/flashsale' --rtt 1ms

Flags (each also read from its environment variable):
`

// parseFlags parses args (after the variables LOCKTABLE_*) into a config.
// It returns flag.ErrHelp after printing the help to stdout, and an error
// wrapping errUsage that lists every problem otherwise.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("locktable", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var redis, etcd, zk, contenders string
	fs.StringVar(&redis, "redis", "", "Redis masters host:port,...: one (single Redis only) or five (Redlock too); the first serves single Redis (default none: both skipped)")
	fs.StringVar(&etcd, "etcd", "", "etcd members host:port or http://host:port,... (default none: skipped)")
	fs.StringVar(&zk, "zookeeper", "", "ZooKeeper members host:port,... (default none: skipped)")
	fs.StringVar(&c.mysqlDSN, "mysql-dsn", "", "MariaDB or MySQL database for the row lock, user:pass@tcp(host:3306)/dbname; the run creates a table of its own there and drops it at the end (default none: skipped)")
	fs.IntVar(&c.workers, "workers", 64, "independent keys: workers, each looping on a key of its own")
	fs.StringVar(&contenders, "contenders", "1,8,64", "one hot key: the numbers of contenders, one case each")
	fs.DurationVar(&c.opts.Duration, "duration", 2*time.Second, "how long each cell (a system, a case, a round) counts")
	fs.DurationVar(&c.opts.Warmup, "warmup", 500*time.Millisecond, "how long each cell runs before it counts")
	fs.IntVar(&c.opts.Rounds, "rounds", 3, "cells per system and case; the table shows the median rate and the range")
	fs.IntVar(&c.opts.MaxOps, "max-ops", 1_000_000, "a cell stops counting after this many cycles")
	fs.DurationVar(&c.wait, "wait", 10*time.Second, "longest one acquire waits for the lock (the row lock: in whole seconds)")
	fs.Var(&c.rtt, "rtt", "a simulated round-trip time between the clients and every server measured, e.g. 1ms; or per link, db=2ms,redis=0.5ms (links: db, redis, etcd, zookeeper; a link not named gets none); each chunk waits its own delay, so pipelined requests are not serialised (default 0: none, loopback as it is)")
	fs.DurationVar(&c.ttl, "ttl", 10*time.Second, "each lock's lease (Redis, etcd; ZooKeeper's is its session), longer than any cycle so that nothing expires or renews")
	if err := flagenv.SetFromEnv(fs, envPrefix, os.Getenv); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usageHeader, maxRun)
			flagenv.PrintFlags(stdout, fs, envPrefix, []string{"redis", "etcd", "zookeeper", "mysql-dsn",
				"workers", "contenders", "duration", "warmup", "rounds", "max-ops", "wait", "ttl", "rtt"})
			return c, err
		}
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	c.redis, c.etcd, c.zookeeper = split(redis), split(etcd), split(zk)
	c.opts.Pause = 10 * time.Millisecond
	id := strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	c.prefix = "flashsale:locktable:" + id + ":"
	c.zkRoot = zklock.DefaultRoot
	c.table = "locktable_" + id
	var bad []string
	bad = append(bad, c.checkServers()...)
	var err error
	if c.contenders, err = parseInts(contenders); err != nil {
		bad = append(bad, "contenders: "+err.Error())
	}
	bad = append(bad, c.checkBounds()...)
	if fs.NArg() > 0 {
		bad = append(bad, fmt.Sprintf("unexpected arguments %q: every setting is a flag", fs.Args()))
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%w:\n  %s", errUsage, strings.Join(bad, "\n  "))
	}
	return c, nil
}

// checkServers checks that something is to be measured, and that every
// address is well formed and on this machine.
func (c *config) checkServers() []string {
	var bad []string
	if len(c.redis)+len(c.etcd)+len(c.zookeeper) == 0 && c.mysqlDSN == "" {
		return []string{"nothing to measure: give at least one of --redis, --etcd, --zookeeper, --mysql-dsn"}
	}
	if n := len(c.redis); n != 0 && n != 1 && n != 5 {
		bad = append(bad, fmt.Sprintf("redis: %d addresses: give one (single Redis) or five (Redlock too)", n))
	}
	for _, f := range []struct {
		name  string
		addrs []string
	}{{"redis", c.redis}, {"etcd", c.etcd}, {"zookeeper", c.zookeeper}} {
		for _, a := range f.addrs {
			if f.name == "etcd" {
				a = strings.TrimPrefix(strings.TrimPrefix(a, "http://"), "https://")
			}
			if err := checkLoopback(a); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %q: %v", f.name, a, err))
			}
		}
	}
	if c.mysqlDSN != "" {
		cfg, err := mysql.ParseDSN(c.mysqlDSN)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("mysql-dsn: %v", err))
		case cfg.Net == "tcp":
			if err := checkLoopback(cfg.Addr); err != nil {
				bad = append(bad, fmt.Sprintf("mysql-dsn: %q: %v", cfg.Addr, err))
			}
		case cfg.Net == "unix" && c.rtt.Of(netsim.DB) != 0:
			bad = append(bad, "mysql-dsn: a unix socket has no network to delay: give tcp(host:port) with --rtt on the db link")
		case cfg.Net != "unix":
			bad = append(bad, fmt.Sprintf("mysql-dsn: network %q: want tcp on loopback, or unix", cfg.Net))
		}
	}
	return bad
}

// checkBounds keeps the run's load and length within the bounds above.
func (c *config) checkBounds() []string {
	var bad []string
	if c.workers < 1 || c.workers > maxWorkers {
		bad = append(bad, fmt.Sprintf("workers: %d: want 1 to %d", c.workers, maxWorkers))
	}
	for _, n := range c.contenders {
		if n < 1 || n > maxWorkers {
			bad = append(bad, fmt.Sprintf("contenders: %d: want 1 to %d each", n, maxWorkers))
		}
	}
	if c.opts.Duration <= 0 || c.opts.Duration > maxDuration {
		bad = append(bad, fmt.Sprintf("duration: %v: want more than 0 and at most %v", c.opts.Duration, maxDuration))
	}
	if c.opts.Warmup < 0 || c.opts.Warmup > maxWarmup {
		bad = append(bad, fmt.Sprintf("warmup: %v: want 0 to %v", c.opts.Warmup, maxWarmup))
	}
	if c.opts.Rounds < 1 || c.opts.Rounds > maxRounds {
		bad = append(bad, fmt.Sprintf("rounds: %d: want 1 to %d", c.opts.Rounds, maxRounds))
	}
	if c.opts.MaxOps < 1 {
		bad = append(bad, fmt.Sprintf("max-ops: %d: want at least 1", c.opts.MaxOps))
	}
	if c.wait < time.Millisecond || c.ttl < time.Millisecond {
		bad = append(bad, fmt.Sprintf("wait %v, ttl %v: want at least 1ms each", c.wait, c.ttl))
	}
	if len(bad) == 0 {
		if est := c.opts.Estimate(c.systems(), locktable.Cases(c.workers, c.contenders)); est > maxRun {
			bad = append(bad, fmt.Sprintf("the run would take about %v, more than %v: fewer --rounds, a shorter --duration or --warmup, or fewer --contenders", est, maxRun))
		}
	}
	return bad
}

// systems is how many systems the flags name.
func (c *config) systems() int {
	n := 0
	for _, on := range []bool{len(c.redis) > 0, len(c.redis) == 5, len(c.etcd) > 0, len(c.zookeeper) > 0, c.mysqlDSN != ""} {
		if on {
			n++
		}
	}
	return n
}

// checkLoopback returns an error unless addr is host:port with a port and
// a host that is this machine: localhost, or a loopback IP.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return errors.New("want host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("no valid port")
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("not a loopback address: locktable measures servers on this machine only")
	}
	return nil
}

// parseInts parses a comma-separated list of integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range split(s) {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", p)
		}
		out = append(out, n)
	}
	return out, nil
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

// endpointURL is an etcd endpoint as a URL, for its /metrics.
func endpointURL(e string) string {
	if strings.Contains(e, "://") {
		return strings.TrimSuffix(e, "/")
	}
	return (&url.URL{Scheme: "http", Host: e}).String()
}
