package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

func TestNonsenseFlagsExit2BeforeAnythingStarts(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"negative users", []string{"--users", "-5"}, []string{"users: -5, want 0..1000000 buyers"}},
		{"zero rate", []string{"--rate", "0"}, []string{"rate: 0, want 1..1000000 requests per second"}},
		{"zookeeper member without a port", []string{"--zookeeper", "127.0.0.1"}, []string{"zookeeper: ", `"127.0.0.1": want host:port`}},
		{"unknown mode", []string{"--strategies", "lua,paxos"}, []string{`strategies: unknown strategy "paxos" (want off, naive, lua, redlock, fenced, etcd, zookeeper, sql-for-update, sql-version, sql-atomic, sql-one-trip, redis-decr, redis-queue, or one of lua, redlock, fenced, etcd followed by "+batch")`}},
		{"batched mode that does not batch", []string{"--strategies", "naive+batch"}, []string{`strategies: "naive+batch": naive does not batch (only lua, redlock, fenced, etcd)`}},
		{"batch too large", []string{"--batch", "1000"}, []string{"batch: 1000, want 1..256 buyers per batch"}},
		{"every problem at once", []string{"--users=-1", "--rate=0", "--stall-rate=2"}, []string{"users: -1", "rate: 0", "stall-rate: 2"}},
		{"not a number", []string{"--users", "many"}, []string{`invalid value "many" for flag -users`}},
		{"unknown flag", []string{"--speed", "9"}, []string{"flag provided but not defined: -speed"}},
		{"positional argument", []string{"lua"}, []string{`unexpected arguments ["lua"]`}},
		{"unknown rtt link", []string{"--rtt", "disk=1ms"}, []string{`unknown link "disk"`, "links: db, redis, etcd, zookeeper"}},
		{"rtt with targets", []string{"--targets", "http://127.0.0.1:8080", "--admin-token", "x", "--rtt", "1ms"}, []string{"rtt: only without --targets"}},
		{"targets without token", []string{"--targets", "http://127.0.0.1:8080"}, []string{"admin-token: required with --targets"}},
		{"bad target", []string{"--targets", "127.0.0.1:8080", "--admin-token", "x"}, []string{`targets: "127.0.0.1:8080" is not a base URL`}},
		{"kill without redlock", []string{"--strategies", "lua", "--redlock-kill", "2"}, []string{"redlock-kill: needs redlock in --strategies"}},
		{"kill external without nodes", []string{"--targets", "http://a:1", "--admin-token", "x", "--redlock-kill", "2"}, []string{"give the fleet's five Redis nodes in --redis"}},
		{"late commit not whole ms", []string{"--late-commit", "1500us"}, []string{"late-commit: 1.5ms, want whole milliseconds"}},
		{"late commit every 0", []string{"--late-commit-every", "0"}, []string{"late-commit-every: 0, want 1..1000000 orders"}},
		{"token without targets", []string{"--admin-token", "x"}, []string{"admin-token: only with --targets"}},
		{"short buyer secret", []string{"--buyer-secret", "short"}, []string{"buyer-secret: 5 bytes, want at least 16"}},
		{"database with targets", []string{"--targets", "http://a:1", "--admin-token", "x", "--mysql-dsn", "root@tcp(127.0.0.1:3306)/x"}, []string{"mysql-dsn: only without --targets"}},
		{"bad redis address", []string{"--redis", "127.0.0.1"}, []string{`redis: "127.0.0.1": want host:port`}},
		{"bad etcd endpoint", []string{"--etcd", "ftp://127.0.0.1:2379"}, []string{`etcd: "ftp://127.0.0.1:2379": want host:port or http://host:port`}},
		{"etcd kill without etcd", []string{"--strategies", "lua", "--etcd-kill", "1"}, []string{"etcd-kill: needs etcd in --strategies"}},
		{"etcd kill of an external cluster", []string{"--strategies", "etcd", "--etcd", "127.0.0.1:2379", "--etcd-kill", "1"}, []string{"etcd-kill: only with the embedded etcd cluster"}},
		{"etcd kill of four", []string{"--strategies", "etcd", "--etcd-kill", "4"}, []string{"etcd-kill: 4, want 0..3 of the 3 etcd members"}},
		{"ttl below the shop's minimum", []string{"--lock-ttl", "5ms"}, []string{"lock-ttl: 5ms, want 10ms..1m0s"}},
		{"restart of six nodes", []string{"--redis-restart", "6"}, []string{"redis-restart: 6, want 0..5 of the 5 Redis nodes"}},
		{"negative restart", []string{"--redis-restart", "-1"}, []string{"redis-restart: -1, want 0..5"}},
		{"negative restart delay", []string{"--redis-restart", "3", "--restart-delay", "-1s"}, []string{"restart-delay: -1s, want 0..1m0s"}},
		{"restart delay without a restart", []string{"--restart-delay", "1s"}, []string{"restart-delay: only with --redis-restart"}},
		{"restart without redlock or fenced", []string{"--strategies", "lua", "--redis-restart", "3"}, []string{"redis-restart: needs redlock or fenced in --strategies"}},
		{"restart of an external fleet without nodes", []string{"--targets", "http://a:1", "--admin-token", "x", "--redis-restart", "3"}, []string{"redis-restart: --redis is missing"}},
		{"restart with too few nodes", []string{"--redis", "127.0.0.1:7001,127.0.0.1:7002", "--redis-restart", "3"}, []string{"redis-restart: 3 nodes to restart, but --redis names 2"}},
		{"restart and kill", []string{"--redis-restart", "3", "--redlock-kill", "2"}, []string{"redlock-kill: not with --redis-restart: both strike the redlock row"}},
		{"failover of an external fleet without Sentinels", []string{"--targets", "http://a:1", "--admin-token", "x", "--failover"}, []string{"failover: --redis-sentinel is missing"}},
		{"failover of another deployment's Sentinels", []string{"--targets", "http://a:1", "--admin-token", "x", "--failover", "--redis-sentinel", "127.0.0.1:26379"}, []string{"failover: not with --redis-sentinel"}},
		{"part without targets", []string{"--part", "1/2", "--run-id", "x"}, []string{"part: only with --targets"}},
		{"part without run id", []string{"--targets", "http://a:1", "--admin-token", "x", "--part", "2/2"}, []string{"part: needs --run-id"}},
		{"part of a sweep", []string{"--targets", "http://a:1", "--admin-token", "x", "--part", "1/2", "--run-id", "x", "--sweep", "100"}, []string{"part: not with --sweep"}},
		{"part beyond its whole", []string{"--part", "3/2"}, []string{`"3/2": want i/n with 1 <= i <= n`}},
		{"run id with a slash", []string{"--run-id", "a/b"}, []string{`run-id: "a/b"`}},
		{"sentinels without failover", []string{"--redis-sentinel", "127.0.0.1:26379"}, []string{"redis-sentinel: only with --failover"}},
		{"failovers without failover", []string{"--failovers", "2"}, []string{"failovers: only with --failover"}},
		{"too many failovers", []string{"--failover", "--failovers", "11"}, []string{"failovers: 11, want 0..10"}},
		{"bad cluster address", []string{"--redis-cluster", "127.0.0.1"}, []string{`redis-cluster: "127.0.0.1": want host:port`}},
		{"cluster of only commas", []string{"--redis-cluster", ","}, []string{`redis-cluster: ",": no address in it`}},
		{"cluster with targets", []string{"--targets", "http://a:1", "--admin-token", "x", "--redis-cluster", "127.0.0.1:7301"}, []string{"redis-cluster: only without --targets"}},
		{"cluster failover of a cluster of someone else's", []string{"--cluster-failover", "--redis-cluster", "127.0.0.1:7301"}, []string{"cluster-failover: not with --redis-cluster or --targets"}},
		{"two failovers", []string{"--failover", "--cluster-failover"}, []string{"failover"}},
		{"rate in a period of nothing", []string{"--rate", "50/0s"}, []string{`"50/0s": the period "0s" is not a duration above 0`}},
		{"rate as a word", []string{"--rate", "fast"}, []string{`"fast": want requests per period, as Vegeta writes it`}},
		{"sweep of nonsense", []string{"--sweep", "250,lots"}, []string{`"lots": want requests per period`}},
		{"sweep at a zero rate", []string{"--sweep", "0,250"}, []string{"rate: 0, want 1..1000000"}},
		{"threshold on no figure", []string{"--threshold", "speed>9"}, []string{`unknown figure "speed"`}},
		{"threshold as a share of a latency", []string{"--threshold", "p99<1%"}, []string{"p99 is not a count of answers"}},
		{"count of 0", []string{"--count", "0"}, []string{"count: 0, want 1..50"}},
		{"workers above max workers", []string{"--workers", "100", "--max-workers", "10"}, []string{"workers: 100, more than --max-workers 10"}},
		{"lock wait of 0", []string{"--lock-wait", "0s"}, []string{"lock-wait: 0s, want more than 0"}},
		{"lock wait of a running fleet", []string{"--targets", "http://a:1", "--admin-token", "x", "--max-in-flight", "4"}, []string{"lock-wait, max-in-flight, buyer-rate, buyer-burst: only without --targets"}},
		{"open model too long", []string{"--users", "0", "--rate", "100000", "--duration", "60s"}, []string{"shorten --duration"}},
		{"failover and restart", []string{"--failover", "--redis-restart", "3"}, []string{"failover: not with --redis-restart: both strike the fenced row"}},
		{"failover and sweep", []string{"--failover", "--sweep", "100,200"}, []string{"sweep: not with --failover"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"--out", out}, tc.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q, want it to contain %q", stderr.String(), w)
				}
			}
			if !strings.Contains(stderr.String(), "loadgen --help") {
				t.Errorf("stderr %q does not point at --help", stderr.String())
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 || stdout.Len() > 0 {
				t.Errorf("something started: %d entries in --out, stdout %q", len(entries), stdout.String())
			}
		})
	}
}

func TestHelpListsEveryFlagWithItsDefault(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, want 0; stderr %s", code, stderr.String())
	}
	help := stdout.String()
	for _, flag := range []string{"modes", "users", "stock", "clicks", "rate", "duration", "lock-ttl", "work", "stall",
		"stall-rate", "late-commit", "late-commit-every", "batch", "seed", "out", "fail-on-unsafe", "redlock-kill", "redis-restart", "restart-delay", "etcd-kill", "targets", "admin-token", "redis", "mysql-dsn", "etcd", "calibrate",
		"timeout", "workers", "max-workers", "count", "lock-wait", "max-in-flight", "sweep", "threshold", "wide"} {
		if !strings.Contains(help, "  --"+flag+"\n") || !strings.Contains(help, "env LOADGEN_"+strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))+",") {
			t.Errorf("--help does not list --%s with its variable:\n%s", flag, help)
		}
	}
	for _, def := range []string{`default "off,naive,lua,redlock,fenced,etcd,zookeeper,sql-for-update,sql-version,sql-atomic,sql-one-trip,redis-decr,redis-queue,fenced+batch"`, `default "loadgen-report"`, `default none: start the embedded fleet`} {
		if !strings.Contains(help, def) {
			t.Errorf("--help does not show %s", def)
		}
	}
}

// --redis-restart sells the product its restart needs, except what the
// command line gave.
func TestRedisRestartSellsItsProduct(t *testing.T) {
	c, err := parseFlags([]string{"--strategies", "redlock", "--redis-restart", "3", "--work", "20ms"}, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	s := c.settings
	if s.LockTTL != fault.RestartLockTTL || s.Work != 20*time.Millisecond || s.StallRate != 0 || s.Stock != fault.RestartStock {
		t.Errorf("settings: ttl %v, work %v, stall rate %v, stock %d; want %v, 20ms (given), 0, %d",
			s.LockTTL, s.Work, s.StallRate, s.Stock, fault.RestartLockTTL, fault.RestartStock)
	}
}

// A small run through the whole command on the embedded backends: the
// table is printed and the report folder written.
func TestSmallEmbeddedRun(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--strategies", "lua", "--users", "60", "--stock", "10", "--rate", "200",
		"--stall-rate", "0", "--fail-on-unsafe", "--out", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "strategy ") || !strings.Contains(stdout.String(), "\nlua ") {
		t.Errorf("no table on stdout:\n%s", stdout.String())
	}
	doc, _ := onlyReport(t, out)
	if doc.Strategies[0].Audit.Oversold != 0 {
		t.Fatalf("report.json: %+v", doc.Strategies)
	}
}

// onlyReport reads the one run's report.json under the --out folder out
// (not latest/, the link to it) and returns it with its path; it fails t
// unless there is exactly one, with exactly one row.
func onlyReport(t *testing.T, out string) (report.Document, string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "[0-9]*", report.JSONFile))
	if len(files) != 1 {
		t.Fatalf("report.json files under --out: %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Document
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Strategies) != 1 {
		t.Fatalf("report.json: %v, %+v", err, doc.Strategies)
	}
	return doc, files[0]
}

// --fail-on-unsafe turns a row that claims to be safe and oversold into
// exit 3.
// The shop here is a stub that claims an oversell in its audit (stubShop):
// the point is the exit code, not the shop.
func TestFailOnUnsafeExits3(t *testing.T) {
	args := []string{"--targets", stubShop(t), "--admin-token", "t", "--strategies", "lua", "--users", "5", "--stock", "1",
		"--rate", "100", "--out", t.TempDir()}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
		t.Fatalf("without --fail-on-unsafe: exit %d, want 0; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "UNSAFE") {
		t.Errorf("stdout does not flag the unsafe row:\n%s", stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), append(args, "--fail-on-unsafe"), &stdout, &stderr); code != exitUnsafe {
		t.Fatalf("with --fail-on-unsafe: exit %d, want %d; stderr %s", code, exitUnsafe, stderr.String())
	}
}

// A late-commit run sells to a bigger crowd unless --users says otherwise:
// its held-back commits hold the hot row for seconds, and the sale must
// still sell out for a lost update to show as an oversold unit.
func TestLateCommitCrowd(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"default", nil, scenario.DefaultSettings().Users},
		{"late commit", []string{"--late-commit", "300ms"}, scenario.LateCommitUsers},
		{"late commit, users given", []string{"--late-commit", "300ms", "--users", "750"}, 750},
		{"users given", []string{"--users", "90"}, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.settings.Users; got != tc.want {
				t.Errorf("users %d, want %d", got, tc.want)
			}
		})
	}
}

// --failover runs its own strategies and product, except what the command line
// gave, with three rounds per attack unless told otherwise.
func TestFailoverSellsItsProduct(t *testing.T) {
	c, err := parseFlags([]string{"--failover", "--stock", "7"}, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	s := c.settings
	f, _ := only[*fault.SentinelFailover](s.Faults)
	if s.LockTTL != fault.FailoverLockTTL || s.Work != fault.FailoverWork || s.Stock != 7 || f == nil || f.Rounds != fault.DefaultFailovers ||
		len(s.Strategies) != 7 || s.Users != fault.FailoverUsers || s.Rate != fault.FailoverRate {
		t.Errorf("settings: ttl %v, work %v, stock %d, failover %+v, strategies %v, %d users at %d/s; want %v, %v, 7 (given), %d rounds, 7 rows, %d at %d/s",
			s.LockTTL, s.Work, s.Stock, f, s.Strategies, s.Users, s.Rate, fault.FailoverLockTTL, fault.FailoverWork, fault.DefaultFailovers, fault.FailoverUsers, fault.FailoverRate)
	}
	if c, _ := parseFlags([]string{"--failover", "--strategies", "lua"}, io.Discard); len(c.settings.Strategies) != 1 {
		t.Errorf("--strategies lua with --failover: strategies %v, want [lua]", c.settings.Strategies)
	}
	if c, _ := parseFlags(nil, io.Discard); len(c.settings.Faults) != 0 {
		t.Errorf("without --failover: faults %v, want none", c.settings.Faults)
	}
}

// Without redis-server and redis-sentinel on the PATH, --failover exits 1
// with the one line that installs them, before any shop starts.
func TestFailoverWithoutBinariesExits1(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--failover", "--out", t.TempDir()}, &stdout, &stderr); code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailed, stderr.String())
	}
	if got, want := stderr.String(), "apt-get install redis-server redis-sentinel"; !strings.Contains(got, want) {
		t.Errorf("stderr %q, want it to say %q", got, want)
	}
}

// only returns the one fault of type T in faults, and how many there are.
func only[T fault.Fault](faults []fault.Fault) (T, int) {
	var got T
	n := 0
	for _, f := range faults {
		if t, ok := f.(T); ok {
			got, n = t, n+1
		}
	}
	return got, n
}
