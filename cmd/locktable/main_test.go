package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/locktable"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/porthold"
)

func TestHelpListsEveryFlagWithItsVariable(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errs); code != exitOK {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitOK, errs.String())
	}
	for _, f := range []string{"redis", "etcd", "zookeeper", "mysql-dsn", "workers", "contenders",
		"duration", "warmup", "rounds", "max-ops", "wait", "ttl", "rtt"} {
		if !strings.Contains(out.String(), "--"+f+"\n") || !strings.Contains(out.String(), "env LOCKTABLE_"+strings.ToUpper(strings.ReplaceAll(f, "-", "_"))) {
			t.Errorf("--help does not list --%s with its variable:\n%s", f, out.String())
		}
	}
}

func TestBadFlagsExit2NamingTheFlag(t *testing.T) {
	redis5 := "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to measure", nil, "give at least one of --redis, --etcd, --zookeeper, --mysql-dsn"},
		{"a remote Redis", []string{"--redis", "10.1.2.3:6379"}, `redis: "10.1.2.3:6379": not a loopback address`},
		{"a remote database", []string{"--mysql-dsn", "u:p@tcp(db.example.com:3306)/x"}, `mysql-dsn: "db.example.com:3306": not a loopback address`},
		{"a remote etcd URL", []string{"--etcd", "http://192.168.1.5:2379"}, `etcd: "192.168.1.5:2379": not a loopback address`},
		{"three Redis nodes", []string{"--redis", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"}, "redis: 3 addresses: give one (single Redis) or five"},
		{"a member without a port", []string{"--zookeeper", "localhost"}, `zookeeper: "localhost": want host:port`},
		{"contenders not numbers", []string{"--redis", "127.0.0.1:1", "--contenders", "1,many"}, `contenders: "many" is not a number`},
		{"too many workers", []string{"--redis", "127.0.0.1:1", "--workers", "1000"}, "workers: 1000: want 1 to 256"},
		{"no rounds", []string{"--redis", "127.0.0.1:1", "--rounds", "0"}, "rounds: 0: want 1 to 10"},
		{"too long", []string{"--redis", redis5, "--etcd", "127.0.0.1:1", "--rounds", "10", "--duration", "30s"}, "the run would take about"},
		{"an argument", []string{"--redis", "127.0.0.1:1", "lua"}, "unexpected arguments"},
		{"an rtt that is no duration", []string{"--redis", "127.0.0.1:1", "--rtt", "fast"}, `"fast" is not a duration`},
		{"an rtt on an unknown link", []string{"--redis", "127.0.0.1:1", "--rtt", "disk=1ms"}, `unknown link "disk"`},
		{"an rtt to a unix socket", []string{"--mysql-dsn", "u@unix(/run/mysqld.sock)/x", "--rtt", "1ms"}, "a unix socket has no network to delay"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			if code := run(context.Background(), c.args, &out, &errs); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errs.String(), c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, errs.String())
			}
		})
	}
}

func TestAnUnreachableServerExits1NamingTheFlag(t *testing.T) {
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", free[0]) // nothing listens there now: the dial is refused
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--redis", addr}, &out, &errs); code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	if want := "--redis " + addr; !strings.Contains(errs.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, errs.String())
	}
}

// TestTinyRunOnTheRealServers runs the whole table, small and short, on
// every real backend the environment names, the others shown as skipped.
func TestTinyRunOnTheRealServers(t *testing.T) {
	args := []string{"--workers", "4", "--contenders", "1,4", "--duration", "200ms", "--warmup", "100ms", "--rounds", "1"}
	var prefix, zkRoot string
	var db *testenv.TestDB
	if len(testenv.RedisModes(t)) > 1 {
		r := testenv.NewRedis(t, testenv.Real)
		args = append(args, "--redis", strings.Join(r.DirectAddrs(), ","))
		prefix = r.Prefix() + "locktable:"
	}
	if len(testenv.EtcdModes()) > 1 {
		args = append(args, "--etcd", strings.Join(testenv.NewEtcd(t, testenv.Real).Endpoints(), ","))
	}
	if os.Getenv(testenv.EnvZooKeeper) != "" {
		z := testenv.NewZooKeeper(t)
		args = append(args, "--zookeeper", strings.Join(z.Servers(), ","))
		zkRoot = z.Root()
	}
	if len(testenv.DBModes(t)) > 1 {
		db = testenv.NewDB(t, testenv.Real)
		args = append(args, "--mysql-dsn", db.DirectDSN())
	}
	cfg, err := parseFlags(args, nil)
	if err != nil {
		if strings.Contains(err.Error(), "nothing to measure") {
			t.Skipf("no real server named (%s, %s, %s, %s)", testenv.EnvRedisAddrs, testenv.EnvEtcdEndpoints, testenv.EnvZooKeeper, testenv.EnvMySQLDSN)
		}
		t.Fatal(err)
	}
	if prefix != "" {
		cfg.prefix = prefix
	}
	if zkRoot != "" {
		cfg.zkRoot = zkRoot
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var progress bytes.Buffer
	r, err := measure(ctx, cfg, &progress)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	tab := r.table
	if got, want := len(tab.Systems), len(locktable.Kinds()); got != want {
		t.Fatalf("%d rows, want one per system, %d", got, want)
	}
	for i, s := range tab.Systems {
		if s.Acquire == nil {
			t.Logf("%s: skipped: %s", s.Name, s.Skip)
			continue
		}
		for j, c := range tab.Cases {
			cell := tab.Cells[i][j]
			if cell.Rate() <= 0 || cell.Cycles == 0 || cell.P50 <= 0 || cell.P99 < cell.P50 || cell.P99 > cfg.wait || cell.Errors != 0 {
				t.Errorf("%s, %s: %v ops/s, %d cycles, p50 %v, p99 %v, %d errors (first: %s): "+
					"want a positive rate, 0 < p50 ≤ p99 ≤ the %v wait, and no errors",
					s.Name, c.Name(), cell.Rate(), cell.Cycles, cell.P50, cell.P99, cell.Errors, cell.FirstErr, cfg.wait)
			}
		}
	}
	var out bytes.Buffer
	r.write(&out, cfg)
	for _, s := range tab.Systems {
		if !strings.Contains(out.String(), "| "+s.Name+" |") {
			t.Errorf("the report has no row for %s:\n%s", s.Name, out.String())
		}
	}
	for _, want := range []string{"## Ratios to single Redis", "## The order, claimed and measured", "## The servers"} {
		if cfg.systems() > 0 && !strings.Contains(out.String(), want) {
			t.Errorf("the report has no %q:\n%s", want, out.String())
		}
	}
	if db != nil {
		var left int64
		if err := db.DB().Raw("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'locktable%'").
			Scan(&left).Error; err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d locktable tables left in the database, want 0 (the run drops its own)", left)
		}
	}
}
