package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

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
