package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestQueuedOrderOverHTTP: a redis-queue product created through one shop
// is sold through another, which answers 202 with a Location; any shop
// answers the poll, queued and then created; an unknown id is 404 and a
// malformed one 400. With the database down the buyer is still answered
// 202, the order waits, and /readyz says why; once the database is back
// the order is written and the shop is ready again. Under -short it ends
// before the database goes down.
func TestQueuedOrderOverHTTP(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		var urls []string
		for range 3 {
			srv := httptest.NewServer(newShop(t, env, app.Config{}).Handler())
			t.Cleanup(srv.Close)
			urls = append(urls, srv.URL)
		}
		client := &http.Client{Timeout: 10 * time.Second}
		ctx := t.Context()
		pid := env.Redis.Key("queued")
		status, body, err := call(ctx, client, "POST", urls[0]+"/api/v1/products",
			fmt.Sprintf(`{"id":%q,"stock":5,"strategy":"redis-queue"}`, pid), testToken)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("create product: %d %v %v", status, body, err)
		}

		// place answers one order through shop i: 202, its id and Location.
		place := func(i int, user string) string {
			t.Helper()
			resp, err := client.Post(urls[i]+"/api/v1/orders", "application/json",
				strings.NewReader(fmt.Sprintf(`{"user_id":%q,"product_id":%q,"quantity":1}`, user, pid)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var o struct{ ID, Status string }
			if err := jsonBody(resp, &o); err != nil || resp.StatusCode != http.StatusAccepted || o.Status != "queued" {
				t.Fatalf("POST order: %d %+v %v; want 202 queued", resp.StatusCode, o, err)
			}
			if got, want := resp.Header.Get("Location"), "/api/v1/orders/"+o.ID; got != want {
				t.Errorf("Location = %q, want %q", got, want)
			}
			return o.ID
		}
		// poll waits until shop i says order id is want.
		poll := func(i int, id, want string) {
			t.Helper()
			deadline := time.Now().Add(15 * time.Second)
			for {
				status, body, err := call(ctx, client, "GET", urls[i]+"/api/v1/orders/"+id, "", "")
				if err == nil && status == http.StatusOK && body["status"] == want {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("GET order %s: %d %v %v; want 200 %s", id, status, body, err, want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}

		id := place(1, "alice")
		poll(2, id, "created")

		if status, body, _ := call(ctx, client, "GET", urls[0]+"/api/v1/orders/"+uuid.NewString(), "", ""); status != http.StatusNotFound {
			t.Errorf("unknown id: %d %v, want 404", status, body)
		}
		if status, body, _ := call(ctx, client, "GET", urls[0]+"/api/v1/orders/bad%20id", "", ""); status != http.StatusBadRequest {
			t.Errorf("malformed id: %d %v, want 400", status, body)
		}

		if testing.Short() {
			t.Log("-short: the database-down half is left to the full run; order's TestQueuedDatabaseDown checks that the entry waits")
			return
		}
		env.DB.Stop()
		id = place(2, "bob")
		// Which shop's consumer reads bob's entry is the group's choice:
		// not ready means some shop names the queue, ready that all are.
		ready := func(want int) {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for {
				var answers []string
				named, all := false, true
				for _, u := range urls {
					status, body, err := call(ctx, client, "GET", u+"/readyz", "", "")
					answers = append(answers, fmt.Sprintf("%d %v %v", status, body, err))
					named = named || (err == nil && status == http.StatusServiceUnavailable && strings.Contains(fmt.Sprint(body), "queue"))
					all = all && err == nil && status == http.StatusOK
				}
				if (want == http.StatusOK && all) || (want != http.StatusOK && named) {
					return
				}
				if time.Now().After(deadline) {
					env.DB.Start()
					t.Fatalf("readyz: %v; want %d (a shop naming the queue when not ready)", answers, want)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		ready(http.StatusServiceUnavailable)
		env.DB.Start()
		poll(0, id, "created")
		ready(http.StatusOK)
	})
}

// jsonBody decodes resp's body into v.
func jsonBody(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
