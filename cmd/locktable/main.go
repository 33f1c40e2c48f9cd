// Command locktable measures the textbook's lock throughput table on this
// machine, in one run: acquire-plus-release of single Redis (the lua
// lock), Redlock over five nodes, etcd, ZooKeeper and the database's row
// lock, with many independent keys and with one hot key, each figure with
// its p50 and p99, beside the claimed figures and ratios. It prints
// Markdown to stdout and its progress to stderr.
//
//	go run ./cmd/locktable --help
//	go run ./cmd/locktable --redis 127.0.0.1:7201,...,127.0.0.1:7205 \
//	  --etcd 127.0.0.1:23801,... --zookeeper 127.0.0.1:22181,... \
//	  --mysql-dsn 'root@tcp(127.0.0.1:3306)/flashsale' --rtt 1ms
//
// It measures servers on this machine only (every address must be
// loopback), and refuses a run longer than a quarter of an hour. --rtt
// puts a simulated network (package netsim) between its clients and
// every server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/flashsale/flashsale/internal/harness/locktable"
	"github.com/flashsale/flashsale/internal/netsim"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command, for main and for tests: it parses args,
// measures, and prints the table to stdout, its progress to stderr. It
// returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "locktable: %v\nRun 'locktable --help' to see every flag and its default.\n", err)
		return exitUsage
	}
	r, err := measure(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "locktable: %v\n", err)
		return exitFailed
	}
	r.write(stdout, cfg)
	return exitOK
}

// report is what a run found: the table, the servers, and how busy the
// machine was in the second before it started.
type report struct {
	table   *locktable.Table
	servers []*server
	idle    float64 // the machine's busy share before the run
	idleOK  bool
	trip    time.Duration // a PING to the first Redis node, before the run
	tripOK  bool
}

// measure opens the backends cfg names, asks the servers about
// themselves, and runs the table, writing its progress to progress.
func measure(ctx context.Context, cfg config, progress io.Writer) (*report, error) {
	systems, b, err := openSystems(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	r := &report{}
	r.idle, r.idleOK = locktable.MachineBusy(ctx, time.Second)
	r.servers = describeServers(ctx, b, cfg)
	if len(b.redis) > 0 {
		r.trip, r.tripOK = roundTrip(ctx, b.redis[0])
	}
	cases := locktable.Cases(cfg.workers, cfg.contenders)
	fmt.Fprintf(progress, "locktable: %d systems, %d cases, %d rounds: about %v\n",
		cfg.systems(), len(cases), cfg.opts.Rounds, cfg.opts.Estimate(cfg.systems(), cases))
	countBefore(ctx, r.servers)
	if r.table, err = locktable.Run(ctx, systems, cases, cfg.opts, progress); err != nil {
		return nil, err
	}
	countAfter(ctx, r.servers)
	return r, nil
}

// write writes the whole report as Markdown: a title, the settings, the
// tables, and the servers.
func (r *report) write(w io.Writer, cfg config) {
	t := r.table
	fmt.Fprintln(w, "# Lock throughput: the claimed table, measured")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Acquire plus release, %s per cell after a %s warm-up, %d round%s, systems interleaved; "+
		"each lock waits at most %s, with a %s lease. Clients and servers share this machine's %d cores (GOMAXPROCS %d); "+
		"one client per server, pools of %d connections. The run took %s.\n\n",
		cfg.opts.Duration, cfg.opts.Warmup, cfg.opts.Rounds, plural(cfg.opts.Rounds), cfg.wait, cfg.ttl,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.pool(), t.Took.Round(1e9))
	fmt.Fprintf(w, "Servers: %s.\n\n", serversLine(cfg))
	fmt.Fprintf(w, "Network: %s.", networkLine(cfg.rtt))
	if r.tripOK {
		fmt.Fprintf(w, " One round trip (the median of %d PINGs to the first Redis node, before the run): %s.", pings, formatMicros(r.trip))
	}
	fmt.Fprint(w, "\n\n")
	if r.idleOK {
		fmt.Fprintf(w, "In the second before the run, the machine was %.0f %% busy with other work.\n\n", 100*r.idle)
	}
	fmt.Fprintln(w, "ops/s is the median of the rounds' rates (rounds: the lowest and highest); p50 and p99 are of every cycle of every round, "+
		"from asking for the lock to the release's answer; client CPU is this process's share of all the cores, machine CPU the whole machine's.")
	fmt.Fprintln(w)
	t.Markdown(w)
	writeServers(w, r.servers)
}

// serversLine names the servers measured, the database by its address
// only (a DSN may hold a password).
func serversLine(cfg config) string {
	var parts []string
	add := func(what string, addrs []string) {
		if len(addrs) > 0 {
			parts = append(parts, fmt.Sprintf("%s at %s", what, strings.Join(addrs, ",")))
		}
	}
	add("Redis", cfg.redis)
	add("etcd", cfg.etcd)
	add("ZooKeeper", cfg.zookeeper)
	if cfg.mysqlDSN != "" {
		if c, err := mysql.ParseDSN(cfg.mysqlDSN); err == nil {
			parts = append(parts, fmt.Sprintf("the database %s at %s", c.DBName, c.Addr))
		}
	}
	return strings.Join(parts, "; ")
}

// networkLine says what lies between the clients and the servers.
func networkLine(rtt netsim.RTT) string {
	if rtt.IsZero() {
		return "none, loopback as it is (no --rtt)"
	}
	return fmt.Sprintf("rtt %s (--rtt): every server is reached through a loopback proxy that delays each chunk by half "+
		"its link's round-trip time each way", rtt)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
