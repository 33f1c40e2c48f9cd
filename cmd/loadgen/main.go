// Command loadgen is the 双11 load generator: it runs the flash sale once
// per strategy (off, naive, lua, redlock, fenced, etcd, sql-for-update,
// sql-version, sql-atomic, sql-one-trip, redis-decr, redis-queue, and fenced+batch) with a Vegeta attack and prints, side by
// side, what each did to the stock: orders, oversold units, duplicate
// orders, throughput and latency, with one line per strategy saying why. It
// also writes a report folder (JSON, Markdown, HTML with charts, Vegeta's
// raw results).
//
// With no flags it needs nothing installed: it starts five embedded Redis
// nodes, a three-member etcd cluster, a SQLite file and three shops on
// loopback ports in process. With --crash N it runs the shops as child
// processes instead, this binary re-executed, and SIGKILLs one N times in
// each attack. With --targets and --admin-token it attacks a running fleet
// instead. With --live it serves a page that shows the sale
// as it happens (package live).
//
//	go run ./cmd/loadgen
//	go run ./cmd/loadgen --live
//	go run ./cmd/loadgen --strategies lua,redlock --redlock-kill 2
//	go run ./cmd/loadgen --late-commit 300ms
//	go run ./cmd/loadgen --strategies redlock,fenced --redis-restart 3 --restart-delay 1s
//	go run ./cmd/loadgen --failover
//	go run ./cmd/loadgen --crash 2
//	go run ./cmd/loadgen --targets http://127.0.0.1:8080 --admin-token secret
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/live"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitUnsafe = 3
	// exitThreshold is k6's exit code for a failed threshold.
	exitThreshold = 99
	// exitFiles: the run ran out of file descriptors (files.go); the
	// report holds what was measured before.
	exitFiles = 4
)

func main() {
	fleet.ServeIfChildShop() // a --crash run's shop: this binary, re-executed
	collectLess()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command, for main and for tests: it parses args, runs
// the scenario, prints the table to stdout and writes the report. It
// returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "compare" {
		return compare(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "merge" {
		return merge(ctx, args[1:], stdout, stderr)
	}
	cfg, err := parseFlags(args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "loadgen: %v\nRun 'loadgen --help' to see every flag and its default.\n", err)
		return exitUsage
	}
	if cfg.calibrate {
		if err := calibrate(ctx, stdout); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	if cfg.cpuProfile != "" {
		stop, err := profileCPU(cfg.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
			return exitFailed
		}
		defer stop()
	}
	err = attack(ctx, cfg, stdout)
	if errors.Is(err, scenario.ErrTooManyOpenFiles) {
		printFilesStopped(stderr, err)
		return exitFiles
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		switch {
		case errors.Is(err, errUnsafe):
			return exitUnsafe
		case errors.Is(err, errThreshold):
			return exitThreshold
		}
		return exitFailed
	}
	return exitOK
}

// errUnsafe is returned by attack when --fail-on-unsafe is set and a safe
// strategy oversold or duplicated.
var errUnsafe = errors.New("unsafe: a strategy that claims to be safe oversold, duplicated an order or drifted (--fail-on-unsafe)")

// attack starts or finds the fleet, runs the scenario, prints the table and
// writes the report.
func attack(ctx context.Context, cfg config, stdout io.Writer) error {
	began := time.Now()
	dir := report.Dir(cfg.out, began)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, closeFleet, err := openFleet(ctx, cfg, dir)
	if err != nil {
		return err
	}
	defer closeFleet()

	if len(cfg.targets) > 0 {
		skipWithoutEnsemble(ctx, &cfg, cfg.targets[0])
	}
	s := cfg.settings
	title := runTitle(cfg, len(f.Targets), f.Backend)
	fmt.Fprintf(stdout, "%s\n\n", strings.Join(report.Wrap(title, report.TerminalWidth), "\n"))
	opts := scenario.Options{Progress: stdout, Terminal: scenario.IsTerminal(stdout), RunID: cfg.runID}
	board, closeLive, err := openLive(cfg.live, title, s.Strategies, stdout)
	if err != nil {
		return err
	}
	defer closeLive()
	if board != nil {
		opts.Watch = board.Watch
	}
	out, runErr := runOrSweep(ctx, cfg, f, opts)
	if out != nil && len(out.Sweep) == 0 {
		out.Skipped = append(cfg.skipped, out.Skipped...)
	}
	if out != nil && errors.Is(runErr, scenario.ErrTooManyOpenFiles) {
		out.Stopped = filesStopped(runErr)
	}
	if out != nil && runErr != nil && out.Stopped == "" {
		out.Stopped = stoppedBy(runErr) // a part so marked is not merged
	}
	if out == nil {
		if board != nil {
			board.Finish(report.Document{}, runErr)
		}
		return runErr
	}
	if board != nil {
		board.Finish(report.NewDocument(out), runErr)
	}
	return finish(stdout, cfg, dir, began, out, runErr)
}

// stoppedBy says why a run that ended with err stopped.
func stoppedBy(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted (SIGINT or SIGTERM): " + err.Error()
	}
	return "ended by an error: " + err.Error()
}

// finish prints out's table, writes its report into dir and says where,
// and returns what the command ends with: runErr first, then errUnsafe
// (--fail-on-unsafe), then errThreshold.
func finish(stdout io.Writer, cfg config, dir string, began time.Time, out *scenario.Outcome, runErr error) error {
	fmt.Fprintln(stdout)
	writeText := report.WriteText
	if cfg.wide {
		writeText = report.WriteWideText
	}
	if err := writeText(stdout, out); err != nil {
		return err
	}
	out.Flags, out.Thresholds = cfg.flags, thresholdTexts(cfg.thresholds)
	failed := report.Check(out, cfg.thresholds)
	if err := report.Write(dir, out); err != nil {
		return errors.Join(runErr, err)
	}
	latestErr := report.LinkLatest(cfg.out, dir)
	fmt.Fprintf(stdout, "\nWall time: %.1fs\n", time.Since(began).Seconds())
	printThresholds(stdout, cfg.thresholds, report.Unchecked(out, cfg.thresholds), failed)
	if latestErr != nil {
		fmt.Fprintf(stdout, "(no latest link: %v)\n", latestErr)
	}
	// The report's folder comes last, for scripts: tail -1.
	files := "report.html, report.md, report.json, results-<strategy>.bin"
	if len(out.Sweep) > 0 {
		files = "report.html, report.md, report.json" // a sweep keeps no raw results
	}
	fmt.Fprintf(stdout, "Report (%s):\n%s\n", files, dir)
	switch {
	case runErr != nil:
		return runErr
	case cfg.failOnUnsafe && len(out.Unsafe()) > 0:
		return errUnsafe
	case len(failed) > 0:
		return errThreshold
	}
	return nil
}

// openFleet attacks the --targets fleet, or starts the embedded one with
// its shops' warnings (a naive lock that expired before its release, for
// one) going to shops.log in the report folder. The returned function stops
// what it started.
func openFleet(ctx context.Context, cfg config, dir string) (*fleet.Fleet, func(), error) {
	if len(cfg.targets) > 0 {
		f := fleet.ExternalFleet(cfg.targets, cfg.adminToken, cfg.redis)
		f.BuyerSecret = cfg.buyerSecret // the running fleet's own; "": it runs open
		return f, func() {}, nil
	}
	logFile, err := os.Create(filepath.Join(dir, "shops.log"))
	if err != nil {
		return nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// go-redis logs every failed dial to stderr on its own; while
	// --redlock-kill holds nodes down that is hundreds of lines over the
	// progress line. They belong with the shops' logs.
	redis.SetLogger(redisLog{log})
	fc := fleet.FleetConfig{MySQLDSN: cfg.mysqlDSN, RedisAddrs: cfg.redis, RedisCluster: cfg.cluster, EtcdEndpoints: cfg.etcd, ZooKeeper: cfg.zookeeper, StartZooKeeper: cfg.startZK, Logger: log, LogDir: dir,
		LockWait: cfg.lockWait, MaxInFlight: cfg.maxInFlight, BuyerRate: cfg.buyerRate, BuyerBurst: cfg.buyerBurst,
		BuyerSecret: cfg.buyerSecret, RTT: cfg.settings.RTT, NaiveExpiry: cfg.naiveExpiry, ClockAhead: cfg.clockAhead}
	fault.Provision(cfg.settings.Faults, &fc) // child shops for --crash, a Sentinel set for --failover...
	f, err := fleet.StartFleet(ctx, fc)
	if err != nil {
		logFile.Close()
		return nil, nil, err
	}
	return f, func() {
		f.Close()
		logFile.Close()
	}, nil
}

// calibrate prints the load generator's ceiling on this machine (see
// scenario.Ceiling) for a few worker counts.
func calibrate(ctx context.Context, stdout io.Writer) error {
	fmt.Fprintln(stdout, "Load generator ceiling: Vegeta at an unlimited rate against a trivial loopback endpoint in this process.")
	for _, workers := range []int{16, 64, 256} {
		c, err := scenario.Ceiling(ctx, 3*time.Second, workers)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %3d workers: %6.0f req/s  (%d requests, %.1f%% 2xx, p50 %v, p99 %v)\n",
			workers, c.Rate, c.Requests, 100*c.Success, c.P50.Round(time.Microsecond), c.P99.Round(time.Microsecond))
	}
	return nil
}

// redisLog passes go-redis's internal log lines to the shops' logger.
type redisLog struct{ log *slog.Logger }

// Printf implements go-redis's logger interface.
func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}

// openLive starts the live page on addr, if addr is set, and prints its
// address. The returned function stops it (the page keeps the last figures
// it was sent). With no addr it returns a nil board.
func openLive(addr, title string, strategies []scenario.Strategy, stdout io.Writer) (*live.Board, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	board := live.NewBoard(title, strategies)
	srv, err := live.Serve(board, addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--live-addr: %w", err)
	}
	fmt.Fprintf(stdout, "Live: %s (open it in a browser; it stops with the run)\n\n", srv.URL)
	return board, func() { srv.Close() }, nil
}
