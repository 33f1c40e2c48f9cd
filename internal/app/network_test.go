package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/netsim"
)

// A shop whose database link has an RTT pays it for each round trip of an
// order: a sql-atomic order's transaction makes at least three (BEGIN, its
// statement, COMMIT), so the order takes at least three RTTs.
func TestShopPaysTheDatabaseRTT(t *testing.T) {
	const rtt = 30 * time.Millisecond
	r, err := netsim.ParseRTT("db=30ms")
	if err != nil {
		t.Fatal(err)
	}
	b, err := app.OpenBackends(t.Context(), app.Config{RTT: r, Logger: quiet})
	if err != nil {
		t.Fatalf("OpenBackends: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Backends.Close: %v", err)
		}
	})
	if b.Net == nil || b.Net.RTT() != r {
		t.Fatalf("Backends.Net: got %v, want a network with rtt %v", b.Net, r)
	}
	srv := httptest.NewServer(newShopOn(t, b, app.Config{}).Handler())
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}

	status, body, err := call(t.Context(), client, "POST", srv.URL+"/api/v1/products",
		`{"id":"rtt-atomic","stock":5,"lock_mode":"sql-atomic"}`, testToken)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create product: %d %v %v", status, body, err)
	}
	start := time.Now()
	status, body, err = call(t.Context(), client, "POST", srv.URL+"/api/v1/orders",
		fmt.Sprintf(`{"user_id":"u1","product_id":%q,"quantity":1}`, "rtt-atomic"), "")
	if err != nil || status != http.StatusCreated {
		t.Fatalf("order: %d %v %v, want 201", status, body, err)
	}
	if took, want := time.Since(start), 3*rtt; took < want {
		t.Errorf("a sql-atomic order at db rtt %v took %v, want at least %v (BEGIN, a statement, COMMIT)", rtt, took, want)
	}
}
