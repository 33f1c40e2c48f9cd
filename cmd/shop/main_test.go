package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/porthold"
)

func noEnv(string) string { return "" }

// TestHelp checks that --help documents every flag with its environment
// variable and default, and exits 0.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var out bytes.Buffer
		err := run(t.Context(), []string{arg}, noEnv, &out)
		if !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("run(%s) = %v, want flag.ErrHelp", arg, err)
		}
		if got := exitCode(err, io.Discard); got != 0 {
			t.Errorf("exit code for %s = %d, want 0", arg, got)
		}
		help := out.String()
		for _, spec := range flagSpecs {
			if !strings.Contains(help, "--"+spec.name) || !strings.Contains(help, "env "+spec.env) {
				t.Errorf("help lacks --%s or its env %s:\n%s", spec.name, spec.env, help)
			}
		}
		for _, def := range []string{`default ":8080"`, `default "5s"`, `default "text"`} {
			if !strings.Contains(help, def) {
				t.Errorf("help lacks %s", def)
			}
		}
	}
}

// TestBadFlags checks that invalid values exit with status 2 and a message
// naming the flag or variable.
func TestBadFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantInMsg string
	}{
		{"unknown flag", []string{"--colour"}, nil, "colour"},
		{"bad duration", []string{"--lock-wait", "soon"}, nil, "lock-wait"},
		{"zero lock wait", []string{"--lock-wait", "0s"}, nil, "lock-wait"},
		{"bad log format", []string{"--log-format", "xml"}, nil, "log-format"},
		{"max in flight not a number", []string{"--max-in-flight", "many"}, nil, "max-in-flight"},
		{"bad log level", []string{"--log-level", "loud"}, nil, "log-level"},
		{"addr without port", []string{"--addr", "localhost"}, nil, "--addr"},
		{"redis without port", []string{"--redis", "127.0.0.1"}, nil, "--redis"},
		{"redis only commas", []string{"--redis", ",,"}, nil, "--redis"},
		{"zookeeper without port", []string{"--zookeeper", "127.0.0.1"}, nil, "--zookeeper"},
		{"zookeeper only commas", []string{"--zookeeper", ","}, nil, "--zookeeper"},
		{"sentinel without port", []string{"--redis-sentinel", "127.0.0.1", "--redis-master", "m"}, nil, "--redis-sentinel"},
		{"sentinel only commas", []string{"--redis-sentinel", ",", "--redis-master", "m"}, nil, "--redis-sentinel"},
		{"sentinel without master", []string{"--redis-sentinel", "127.0.0.1:26379"}, nil, "--redis-master is missing"},
		{"master without sentinel", []string{"--redis-master", "m"}, nil, "--redis-sentinel is missing"},
		{"env master without sentinel", nil, map[string]string{"SHOP_REDIS_MASTER": "m"}, "--redis-sentinel is missing"},
		{"master with a space", []string{"--redis-sentinel", "127.0.0.1:26379", "--redis-master", "my master"}, nil, "--redis-master"},
		{"cluster without port", []string{"--redis-cluster", "127.0.0.1"}, nil, "--redis-cluster"},
		{"cluster only commas", []string{"--redis-cluster", ", ,"}, nil, "--redis-cluster"},
		{"cluster beside sentinels", []string{"--redis-cluster", "127.0.0.1:7301", "--redis-sentinel", "127.0.0.1:26379", "--redis-master", "m"}, nil, "--redis-cluster and --redis-sentinel"},
		{"dsn without database", []string{"--mysql-dsn", "root@tcp(127.0.0.1:3306)/"}, nil, "--mysql-dsn"},
		{"positional argument", []string{"serve"}, nil, "serve"},
		{"bad env duration", nil, map[string]string{"SHOP_LOCK_WAIT": "later"}, "SHOP_LOCK_WAIT"},
		{"bad env format", nil, map[string]string{"SHOP_LOG_FORMAT": "xml"}, "log-format"},
		{"pprof without port", []string{"--pprof", "127.0.0.1"}, nil, "--pprof"},
		{"short buyer secret", []string{"--buyer-secret", "short"}, nil, "--buyer-secret"},
		{"short env buyer secret", nil, map[string]string{"SHOP_BUYER_SECRET": "short"}, "--buyer-secret"},
		{"unknown rtt link", []string{"--rtt", "disk=1ms"}, nil, "links: db, redis, etcd, zookeeper"},
		{"bad env rtt", nil, map[string]string{"SHOP_RTT": "fast"}, "SHOP_RTT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			err := run(t.Context(), tt.args, getenv, io.Discard)
			var stderr bytes.Buffer
			if got := exitCode(err, &stderr); got != 2 {
				t.Fatalf("run = %v, exit code %d, want 2", err, got)
			}
			if !strings.Contains(stderr.String(), tt.wantInMsg) {
				t.Errorf("stderr = %q, want it to mention %q", stderr.String(), tt.wantInMsg)
			}
		})
	}
}

// TestFlagsBeatEnv checks the precedence: flag, then environment, then
// default.
func TestFlagsBeatEnv(t *testing.T) {
	env := map[string]string{"SHOP_ADDR": ":7000", "SHOP_LOCK_WAIT": "2s", "SHOP_ADMIN_TOKEN": "from-env"}
	o, err := parseFlags([]string{"--addr", ":9000"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != ":9000" || o.lockWait != 2*time.Second || o.adminToken != "from-env" || o.logFormat != "text" {
		t.Errorf("options = %+v, want addr from the flag, lock wait and token from env, log format default", o)
	}
}

// TestMaxInFlight checks that --max-in-flight reaches app.Config as given,
// so that the flag's 0 (the default) and negative (no limit) are app's.
func TestMaxInFlight(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"no flag", nil, nil, app.DefaultMaxInFlightOrders},
		{"a limit", []string{"--max-in-flight", "3"}, nil, 3},
		{"zero: the default", []string{"--max-in-flight", "0"}, nil, 0},
		{"negative: no limit", []string{"--max-in-flight", "-1"}, nil, -1},
		{"from the environment", nil, map[string]string{"SHOP_MAX_IN_FLIGHT": "-1"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatalf("parseFlags(%q) = %v, want no error", tt.args, err)
			}
			if got := o.config(nil).MaxInFlightOrders; got != tt.want {
				t.Errorf("app.Config.MaxInFlightOrders = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSentinelFlags checks that --redis-sentinel and --redis-master, or
// their variables, reach app.Config as one SentinelMaster, and that
// without them it is the zero value.
func TestSentinelFlags(t *testing.T) {
	env := map[string]string{"SHOP_REDIS_SENTINEL": "s1:26379, s2:26379", "SHOP_REDIS_MASTER": "flashsale"}
	o, err := parseFlags(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := o.config(nil).RedisMaster
	if want := (app.SentinelMaster{Sentinels: []string{"s1:26379", "s2:26379"}, Name: "flashsale"}); !slices.Equal(got.Sentinels, want.Sentinels) || got.Name != want.Name {
		t.Errorf("RedisMaster = %+v, want %+v", got, want)
	}
	o, err = parseFlags(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.config(nil).RedisMaster; !got.IsZero() {
		t.Errorf("RedisMaster without the flags = %+v, want the zero value", got)
	}
}

// TestClusterFlags checks that --redis-cluster, or SHOP_REDIS_CLUSTER,
// reaches app.Config as the nodes named, and that a cluster none of whose
// nodes answers stops the shop at start (exit status 1) with a message
// naming the flag.
func TestClusterFlags(t *testing.T) {
	env := map[string]string{"SHOP_REDIS_CLUSTER": "c1:7301, c2:7302"}
	o, err := parseFlags(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.config(nil).RedisCluster, []string{"c1:7301", "c2:7302"}; !slices.Equal(got, want) {
		t.Errorf("RedisCluster = %q, want %q", got, want)
	}
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", free[0]) // nothing listens there now
	err = run(t.Context(), []string{"--addr", "127.0.0.1:0", "--redis-cluster", closed}, noEnv, io.Discard)
	var stderr bytes.Buffer
	if got := exitCode(err, &stderr); got != 1 || !strings.Contains(stderr.String(), "--redis-cluster") || !strings.Contains(stderr.String(), "no Redis Cluster node answers") {
		t.Errorf("run on an unreachable cluster = exit %d, %q; want 1 naming --redis-cluster and saying no node answers", got, stderr.String())
	}
}

// TestBuyerSecret: SHOP_BUYER_SECRET reaches app.Config, and the start-up
// log says whether buyer tokens are required.
func TestBuyerSecret(t *testing.T) {
	secret := "a-secret-of-sixteen-or-more"
	o, err := parseFlags(nil, func(k string) string { return map[string]string{"SHOP_BUYER_SECRET": secret}[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.config(nil).BuyerSecret; got != secret {
		t.Errorf("BuyerSecret = %q, want %q", got, secret)
	}
	for _, tt := range []struct{ name, secret, want string }{
		{"off", "", "buyer tokens: off (anyone may act for any buyer)"},
		{"on", secret, "buyer tokens: on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logBuyerTokens(slog.New(slog.NewTextHandler(&buf, nil)), tt.secret)
			if !strings.Contains(buf.String(), tt.want) {
				t.Errorf("log = %q, want it to say %q", buf.String(), tt.want)
			}
			if tt.secret != "" && strings.Contains(buf.String(), tt.secret) {
				t.Errorf("log = %q names the secret", buf.String())
			}
		})
	}
}

// TestRTT checks that --rtt (or SHOP_RTT) reaches app.Config, in either
// form, and that none is the default.
func TestRTT(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no flag", nil, nil, "0"},
		{"every link", []string{"--rtt", "1ms"}, nil, "1ms"},
		{"per link", []string{"--rtt", "db=2ms,redis=0.5ms"}, nil, "db=2ms,redis=500µs"},
		{"from the environment", nil, map[string]string{"SHOP_RTT": "etcd=3ms"}, "etcd=3ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatalf("parseFlags(%q) = %v, want no error", tt.args, err)
			}
			if got := o.config(nil).RTT.String(); got != tt.want {
				t.Errorf("app.Config.RTT = %q, want %q", got, tt.want)
			}
		})
	}
}
