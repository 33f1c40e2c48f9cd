package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/testenv"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now
	err = run(t.Context(), []string{"--addr", "127.0.0.1:0", "--redis-cluster", closed}, noEnv, io.Discard)
	var stderr bytes.Buffer
	if got := exitCode(err, &stderr); got != 1 || !strings.Contains(stderr.String(), "--redis-cluster") || !strings.Contains(stderr.String(), "no Redis Cluster node answers") {
		t.Errorf("run on an unreachable cluster = exit %d, %q; want 1 naming --redis-cluster and saying no node answers", got, stderr.String())
	}
}

// TestRunSentinel starts the shop with --redis-sentinel and --redis-master
// alone, on real Sentinels: /readyz names their master, redlock runs on
// five embedded nodes of the shop's own, and a lua order sells.
func TestRunSentinel(t *testing.T) {
	sentinels := testenv.NewSentinels(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, token, done := startRun(ctx, t, "--addr", "127.0.0.1:0", "--log-format", "json",
		"--redis-sentinel", strings.Join(sentinels.Addrs(), ","), "--redis-master", testenv.SentinelMasterName)

	var ready struct {
		Status      string `json:"status"`
		RedisNodes  int    `json:"redis_nodes"`
		RedisMaster string `json:"redis_master"`
	}
	if status := getJSON(t, "http://"+addr+"/readyz", &ready); status != http.StatusOK ||
		ready.RedisMaster != sentinels.Master() || ready.RedisNodes != app.EmbeddedRedisNodes {
		t.Errorf("readyz = %d %+v, want 200 naming master %s beside %d embedded nodes", status, ready, sentinels.Master(), app.EmbeddedRedisNodes)
	}
	for _, req := range []struct{ path, body string }{
		{"/api/v1/products", `{"id":"phone","stock":3,"strategy":"lua"}`},
		{"/api/v1/orders", `{"user_id":"alice","product_id":"phone","quantity":1}`},
	} {
		if status := postJSON(t, "http://"+addr+req.path, token, req.body); status != http.StatusCreated {
			t.Errorf("POST %s = %d, want 201", req.path, status)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}

// getJSON GETs url and decodes the body into v; it returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode
}

// postJSON POSTs body to url with the admin token; it returns the status.
func postJSON(t *testing.T, url, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRunEmbedded starts the shop as a newcomer would, with no backend
// flags, on a random port: it answers /healthz, logs a usable admin token,
// and stops cleanly when its context ends.
func TestRunEmbedded(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, token, done := startRun(ctx, t, "--addr", "127.0.0.1:0", "--log-format", "json")
	if token == "" {
		t.Error("no admin_token logged in embedded mode")
	}

	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz = %d, want 200", resp.StatusCode)
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/products",
		strings.NewReader(`{"id":"phone","stock":3,"lock_mode":"lua"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("create product with the logged token = %d, want 201", resp.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}

// TestRunRefusesOtherLockServers starts two shops on one database as two
// replicas given --mysql-dsn and nothing else would be: each with embedded
// Redis and etcd of its own. The second refuses to start, exits 1, and
// says which flags to give.
func TestRunRefusesOtherLockServers(t *testing.T) {
	if len(testenv.DBModes(t)) < 2 {
		t.Skipf("needs %s: two processes can share only a real database", testenv.EnvMySQLDSN)
	}
	tdb := testenv.NewDB(t, testenv.Real)
	args := []string{"--addr", "127.0.0.1:0", "--mysql-dsn", tdb.DSN(), "--log-format", "json"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, _, done := startRun(ctx, t, args...)

	err := run(t.Context(), args, noEnv, io.Discard)
	var stderr bytes.Buffer
	if got := exitCode(err, &stderr); got != 1 {
		t.Fatalf("second shop: run = %v, exit code %d, want 1", err, got)
	}
	for _, want := range []string{"another live shop on this database locks on other servers", "this shop:  redis 127.0.0.1:", "the same --redis and --etcd"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	t.Logf("the second shop said:\n%s", stderr.String())

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("first shop: run after cancel = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("first shop: run did not return after its context ended")
	}
}

// startRun runs the shop with args until ctx ends, and returns once it
// serves: its address, the admin token it logged (if any), and a channel
// that receives what run returned. args must include --log-format json.
func startRun(ctx context.Context, t *testing.T, args ...string) (addr, token string, done <-chan error) {
	t.Helper()
	logs, logw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, args, noEnv, logw)
		logw.Close()
	}()

	// Read the JSON log lines until the shop says where it serves; keep
	// draining afterwards so that logging never blocks.
	found := make(chan [2]string, 1)
	go func() {
		var token string
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			if tok, ok := line["admin_token"].(string); ok {
				token = tok
			}
			if line["msg"] == "shop: serving" {
				found <- [2]string{line["addr"].(string), token}
			}
		}
	}()
	select {
	case f := <-found:
		return f[0], f[1], errc
	case err := <-errc:
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("shop did not start within 30s")
	}
	return "", "", nil
}
