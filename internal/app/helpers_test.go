package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

const testToken = "test-admin-token"

// quiet discards the shops' logs; a failing test prints what it needs.
var quiet = slog.New(slog.DiscardHandler)

// testLogger logs at level and above through t.Log, so that the shops'
// errors show up next to a failing test (and with -v).
func testLogger(t *testing.T, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: level}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// backendsOf wraps a test environment as app.Backends: NewShop reads only
// DB and RedisAddrs (the proxies, so faults reach the shop).
func backendsOf(env *testenv.Env) *app.Backends {
	return &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}
}

// newShop builds a shop on env and closes it at cleanup.
func newShop(t *testing.T, env *testenv.Env, cfg app.Config) *app.Shop {
	t.Helper()
	return newShopOn(t, backendsOf(env), cfg)
}

// newShopOn builds a shop on b and closes it at cleanup.
func newShopOn(t *testing.T, b *app.Backends, cfg app.Config) *app.Shop {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = testToken
	}
	shop, err := app.NewShop(t.Context(), cfg, b)
	if err != nil {
		t.Fatalf("NewShop: %v", err)
	}
	t.Cleanup(func() {
		if err := shop.Close(); err != nil {
			t.Errorf("shop.Close: %v", err)
		}
	})
	return shop
}

// call sends one JSON request to base+path and returns the status and the
// decoded body.
func call(ctx context.Context, client *http.Client, method, url, body, token string) (int, map[string]any, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, m, nil
}

// errorCode returns the error code of an error body, or "".
func errorCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}
