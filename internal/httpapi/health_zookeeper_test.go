package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/zklock"
)

// TestReadyzAsksZooKeeper: /readyz says nothing of a ZooKeeper session
// that answers reads, and answers 503 naming zookeeper once it cannot
// (here its Locker closed, as a session the ensemble ended is).
func TestReadyzAsksZooKeeper(t *testing.T) {
	z := testenv.NewZooKeeper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := zklock.New(ctx, z.Servers(), zklock.Options{Root: z.Root()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := httpapi.NewRouter(httpapi.Deps{ZooKeeper: l, Logger: slog.New(slog.DiscardHandler)})
	ready := func() (int, string) {
		rec := do(t, h, request{method: "GET", path: "/readyz"})
		var e struct{ Error struct{ Message string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		return rec.Code, e.Error.Message
	}
	// With no database the probe is never ready; what matters is what it
	// says of ZooKeeper.
	if code, msg := ready(); code != http.StatusServiceUnavailable || strings.Contains(msg, "zookeeper") {
		t.Fatalf("readyz with the ensemble up = %d %q, want 503 for the database only", code, msg)
	}
	l.Close()
	if code, msg := ready(); code != http.StatusServiceUnavailable || !strings.Contains(msg, "zookeeper: no read") {
		t.Errorf("readyz with the session closed = %d %q, want 503 naming zookeeper", code, msg)
	}
}
