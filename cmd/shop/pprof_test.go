package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestServeProfiles serves the profiles on a loopback port of their own and
// stops serving them.
func TestServeProfiles(t *testing.T) {
	var logged strings.Builder
	stop, err := serveProfiles("127.0.0.1:0", slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, addr, ok := strings.Cut(logged.String(), "addr=")
	if !ok {
		t.Fatalf("the log does not say where the profiles are: %q", logged.String())
	}
	url := "http://" + strings.TrimSpace(addr) + "/debug/pprof/goroutine?debug=1"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("GET %s = %d %.80q, want 200 and a goroutine profile", url, resp.StatusCode, body)
	}
	stop()
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("GET %s after stop = %d, want a refused connection", url, resp.StatusCode)
	}
}
