package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestMetrics sells on a shop and reads its GET /metrics as Prometheus
// would: every order counted once under its strategy and outcome, the lock
// waits and critical sections beside them, Redlock's votes per node, the
// batches, the audit's gauges, the door's gauges back at zero, and the Go
// and process collectors there. Every query of compose's Grafana dashboard
// must name metrics of this scrape, and docs/metrics.md must document exactly
// the flashsale metrics it has.
func TestMetrics(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		srv := httptest.NewServer(newShop(t, env, app.Config{}).Handler())
		t.Cleanup(srv.Close)
		client := srv.Client()
		ctx := t.Context()
		order := func(pid, user string) (int, string) {
			t.Helper()
			status, body, err := call(ctx, client, "POST", srv.URL+"/api/v1/orders",
				fmt.Sprintf(`{"user_id":%q,"product_id":%q,"quantity":1}`, user, pid), "")
			if err != nil {
				t.Fatalf("order %s for %s: %v", user, pid, err)
			}
			return status, errorCode(body)
		}
		create := func(name, body string) string {
			t.Helper()
			pid := env.Redis.Key(name)
			status, resp, err := call(ctx, client, "POST", srv.URL+"/api/v1/products",
				fmt.Sprintf(`{"id":%q,"stock":5,%s}`, pid, body), testToken)
			if err != nil || status != http.StatusCreated {
				t.Fatalf("create %s: %d %v %v", name, status, resp, err)
			}
			return pid
		}

		// Redlock, one buyer at a time: 5 created, one repeated click, 2 too late.
		pid := create("redlock", `"strategy":"redlock"`)
		want := []string{"", "duplicate_order", "", "", "", "", "sold_out", "sold_out"}
		for i, user := range []string{"b0", "b0", "b1", "b2", "b3", "b4", "b5", "b6"} {
			if status, code := order(pid, user); code != want[i] {
				t.Fatalf("order %d (%s): %d %q, want %q", i, user, status, code, want[i])
			}
		}
		// Fenced with batching, 12 buyers at once for 5 units.
		batched := create("batched", `"strategy":"fenced","batch_max":16,"work_ms":5`)
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() { order(batched, fmt.Sprintf("c%d", i)) })
		}
		wg.Wait()
		// A redis-queue product, so that its queue's gauges are exported:
		// one order accepted (202), written behind the queue.
		queued := create("queued", `"strategy":"redis-queue"`)
		if status, code := order(queued, "q0"); status != http.StatusAccepted {
			t.Fatalf("queued order: %d %q, want 202", status, code)
		}

		m := scrape(t, client, srv.URL)
		counter := func(name string, labels ...string) float64 {
			t.Helper()
			return m.value(t, name, labels...)
		}
		for outcome, n := range map[string]float64{"created": 5, "duplicate_order": 1, "sold_out": 2} {
			if got := counter("flashsale_orders_total", "strategy", "redlock", "outcome", outcome); got != n {
				t.Errorf("orders_total{redlock,%s} = %v, want %v", outcome, got, n)
			}
		}
		if got := counter("flashsale_orders_total", "strategy", "fenced", "outcome", "created"); got != 5 {
			t.Errorf("orders_total{fenced,created} = %v, want 5", got)
		}
		if got := counter("flashsale_orders_total", "strategy", "fenced", "outcome", "sold_out"); got != 7 {
			t.Errorf("orders_total{fenced,sold_out} = %v, want 7 (12 buyers, 5 units)", got)
		}
		asks := counter("flashsale_lock_acquisitions_total", "strategy", "redlock", "outcome", "acquired")
		if asks < 6 { // five sales and the repeated click; the last two may be answered before the lock
			t.Errorf("lock_acquisitions_total{redlock,acquired} = %v, want at least 6", asks)
		}
		if got := m.count(t, "flashsale_lock_wait_seconds", "strategy", "redlock"); got != uint64(asks) {
			t.Errorf("lock_wait_seconds_count{redlock} = %d, want one per ask (%v)", got, asks)
		}
		if got := m.count(t, "flashsale_critical_section_seconds", "strategy", "redlock"); got != uint64(asks) {
			t.Errorf("critical_section_seconds_count{redlock} = %d, want one per lock acquired (%v)", got, asks)
		}
		// A round ends once a majority has granted, and a node that had
		// not answered by then counts as no_answer: which nodes grant
		// depends on which are quickest. What always holds: every node is
		// counted once per round, none failed (all are up), and a majority
		// granted each acquisition.
		granted, rounds := 0.0, make([]float64, 5)
		for node := range 5 {
			for _, vote := range []string{"granted", "refused", "no_answer", "failed"} {
				if s := m.find("flashsale_redlock_votes_total", "node", fmt.Sprint(node), "vote", vote); s != nil {
					rounds[node] += s.GetCounter().GetValue()
				}
			}
			if f := m.find("flashsale_redlock_votes_total", "node", fmt.Sprint(node), "vote", "failed"); f != nil {
				t.Errorf("redlock_votes_total{node=%d,failed} = %v, want none: every node is up", node, f.GetCounter().GetValue())
			}
			if s := m.find("flashsale_redlock_votes_total", "node", fmt.Sprint(node), "vote", "granted"); s != nil {
				granted += s.GetCounter().GetValue()
			}
		}
		if rounds[0] < asks || slices.Min(rounds) != slices.Max(rounds) {
			t.Errorf("redlock votes per node = %v, want the same count for every node, at least one per acquisition (%v)", rounds, asks)
		}
		if granted < 3*asks {
			t.Errorf("granted votes = %v, want at least a majority (3) per acquisition (%v)", granted, asks)
		}
		// Every buyer who got a unit was in a batch; those who came after
		// the shop saw the stock at 0 were answered without one.
		buyers, batches := m.sum(t, "flashsale_batch_buyers", "strategy", "fenced"), m.count(t, "flashsale_batch_buyers", "strategy", "fenced")
		if buyers < 5 || buyers > 12 || batches == 0 || float64(batches) > buyers {
			t.Errorf("batch_buyers{fenced}: %d batches of %v buyers, want 5 to 12 buyers (12 came, 5 bought) in at least one batch", batches, buyers)
		}
		if got := counter("flashsale_product_oversold_units", "product", pid, "strategy", "redlock"); got != 0 {
			t.Errorf("product_oversold_units{%s} = %v, want 0", pid, got)
		}
		if got := counter("flashsale_product_stock_units", "product", batched, "strategy", "fenced"); got != 0 {
			t.Errorf("product_stock_units{%s} = %v, want 0: all five sold", batched, got)
		}
		if got := counter("flashsale_product_sold_units", "product", pid, "strategy", "redlock"); got != 5 {
			t.Errorf("product_sold_units{%s} = %v, want 5", pid, got)
		}
		for _, g := range []string{"flashsale_orders_in_flight", "flashsale_orders_queued"} {
			if got := counter(g); got != 0 {
				t.Errorf("%s = %v after the sale, want 0", g, got)
			}
		}
		checkDashboard(t, m)
		checkMetricsDoc(t, m)
		checkStrategyLabel(t, m)
		for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "flashsale_lock_retries_total", "flashsale_order_events_total", "flashsale_orders_turned_away_total"} {
			if _, ok := m[name]; !ok {
				t.Errorf("%s is not exported", name)
			}
		}
	})
}

// families is a scrape, by metric name.
type families map[string]*dto.MetricFamily

// scrape reads base's /metrics in the Prometheus text format.
func scrape(t *testing.T, client *http.Client, base string) families {
	t.Helper()
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET /metrics: Content-Type %q, want the text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	m, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return m
}

// metric finds the series of name with the label pairs given, or fails.
func (f families) metric(t *testing.T, name string, labels ...string) *dto.Metric {
	t.Helper()
	if _, ok := f[name]; !ok {
		t.Fatalf("%s is not exported", name)
	}
	m := f.find(name, labels...)
	if m == nil {
		t.Fatalf("%s has no series %v", name, labels)
	}
	return m
}

// find returns the series of name with the label pairs given, or nil.
func (f families) find(name string, labels ...string) *dto.Metric {
next:
	for _, m := range f[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// value is a counter's or gauge's value.
func (f families) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	m := f.metric(t, name, labels...)
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// count and sum are a histogram's.
func (f families) count(t *testing.T, name string, labels ...string) uint64 {
	t.Helper()
	return f.metric(t, name, labels...).GetHistogram().GetSampleCount()
}

func (f families) sum(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	return f.metric(t, name, labels...).GetHistogram().GetSampleSum()
}
