package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestShopCountsWhatItHears: each observer call moves its own series, by
// its own labels, and nothing else.
func TestShopCountsWhatItHears(t *testing.T) {
	m := New()
	m.Placed(strategy.Lua, "created", 3*time.Millisecond)
	m.Placed(strategy.Lua, "created", 5*time.Millisecond)
	m.Placed(strategy.Lua, "sold_out", time.Millisecond)
	m.Placed("", "invalid_argument", time.Millisecond)
	m.LockWaited(strategy.Fenced, "lock_timeout", time.Second)
	m.Happened(strategy.Fenced, order.EventFencedOut)
	m.Batched(strategy.RedisDecr, 5)
	m.Batched(strategy.RedisDecr, 7)
	m.TurnedAway(httpapi.ShedQueueFull)
	m.Queued(2)
	m.Queued(-1)
	m.InFlight(3)
	m.RedisMasterChanged()
	l := m.Locker(dlock.ModeRedlock)
	l.Retried()
	l.Voted(2, dlock.VoteRefused)

	for _, c := range []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"created lua orders", m.orders.WithLabelValues("lua", "created"), 2},
		{"sold-out lua orders", m.orders.WithLabelValues("lua", "sold_out"), 1},
		{"orders of no product yet", m.orders.WithLabelValues("none", "invalid_argument"), 1},
		{"fenced lock timeouts", m.lockAsks.WithLabelValues("fenced", "lock_timeout"), 1},
		{"fenced_out events", m.events.WithLabelValues("fenced", string(order.EventFencedOut)), 1},
		{"turned away, queue full", m.turnedAway.WithLabelValues(httpapi.ShedQueueFull), 1},
		{"turned away, wait expired", m.turnedAway.WithLabelValues(httpapi.ShedWaitExpired), 0},
		{"queued", m.queued, 1},
		{"in flight", m.inFlight, 3},
		{"master changes", m.masterMoves, 1},
		{"redlock retries", m.retries.WithLabelValues(string(dlock.ModeRedlock)), 1},
		{"node 2's refusals", m.votes.WithLabelValues("2", string(dlock.VoteRefused)), 1},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	// The group commits' histogram: two groups, 12 orders.
	var h dto.Metric
	if err := m.batchSize.WithLabelValues("redis-decr").(prometheus.Metric).Write(&h); err != nil {
		t.Fatal(err)
	}
	if n, sum := h.GetHistogram().GetSampleCount(), h.GetHistogram().GetSampleSum(); n != 2 || sum != 12 {
		t.Errorf("redis-decr group sizes: %d groups, %v orders; want 2 and 12", n, sum)
	}
}

// TestZeroSeries: a new shop exports the series a dashboard plots at 0,
// before the first event: every shed reason, per strategy its orders, and
// the series of the database's locks.
func TestZeroSeries(t *testing.T) {
	m := New()
	if n := testutil.CollectAndCount(m.turnedAway); n != 3 {
		t.Errorf("turned-away series of a new shop: %d, want one per reason (3)", n)
	}
	if n := testutil.CollectAndCount(m.batchSize); n == 0 {
		t.Error("no batch-size series before the first batch")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var wants []string
	for _, s := range strategy.All() {
		wants = append(wants, `flashsale_orders_total{outcome="created",strategy="`+string(s)+`"} 0`)
	}
	// The database locks' own: sql-for-update's row lock, sql-version's
	// lost tries and its answer when they run out.
	for _, want := range append(wants,
		`flashsale_lock_wait_seconds_count{strategy="sql-for-update"} 0`,
		`flashsale_critical_section_seconds_count{strategy="sql-for-update"} 0`,
		`flashsale_critical_section_seconds_count{strategy="sql-atomic"} 0`,
		`flashsale_critical_section_seconds_count{strategy="sql-version"} 0`,
		`flashsale_order_events_total{event="version_moved",strategy="sql-version"} 0`,
		`flashsale_orders_total{outcome="version_conflict",strategy="sql-version"} 0`,
	) {
		if !strings.Contains(rec.Body.String(), want+"\n") {
			t.Errorf("a new shop's scrape has no %s", want)
		}
	}
}

// fakeShop is the order service as the scrape-time collectors see it.
type fakeShop struct {
	products []stock.Product
	audits   map[string]order.Audit
	failing  map[string]bool // backlogs that fail
	backlogs map[string]redisqueue.Backlog
}

func (f fakeShop) Recent(n int) []stock.Product { return f.products[:min(n, len(f.products))] }

func (f fakeShop) Audit(_ context.Context, id string) (order.Audit, error) {
	a, ok := f.audits[id]
	if !ok {
		return order.Audit{}, errors.New("database did not answer")
	}
	return a, nil
}

func (f fakeShop) QueueBacklog(_ context.Context, id string) (redisqueue.Backlog, error) {
	if f.failing[id] {
		return redisqueue.Backlog{}, errors.New("redis did not answer")
	}
	return f.backlogs[id], nil
}

// TestScrapeTimeGauges: the audit and queue gauges are read at the scrape,
// per product under test; a failed audit is counted, not shown as zeros;
// only a redis-queue product has queue gauges.
func TestScrapeTimeGauges(t *testing.T) {
	shop := fakeShop{
		products: []stock.Product{
			{ID: "phone", Strategy: strategy.Naive},
			{ID: "tv", Strategy: strategy.RedisQueue},
			{ID: "gone", Strategy: strategy.Lua},
		},
		audits: map[string]order.Audit{
			"phone": {Stock: 0, Sold: 103, Oversold: 3, DuplicateOrders: 1},
			"tv":    {Stock: 40, Sold: 60},
		},
		backlogs: map[string]redisqueue.Backlog{"tv": {Length: 12, Pending: 5}},
	}
	m := New()
	m.Audits(shop)
	m.Queues(shop)
	body := scrape(t, m)
	for _, line := range []string{
		`flashsale_product_oversold_units{product="phone",strategy="naive"} 3`,
		`flashsale_product_sold_units{product="phone",strategy="naive"} 103`,
		`flashsale_product_duplicate_orders{product="phone",strategy="naive"} 1`,
		`flashsale_product_stock_units{product="tv",strategy="redis-queue"} 40`,
		`flashsale_product_audit_errors 1`,
		`flashsale_queue_length{product="tv",strategy="redis-queue"} 12`,
		`flashsale_queue_pending{product="tv",strategy="redis-queue"} 5`,
		`flashsale_queue_lag{product="tv",strategy="redis-queue"} 7`,
	} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("the scrape has no line %q", line)
		}
	}
	for _, absent := range []string{`product="gone"`, `flashsale_queue_length{product="phone"`} {
		if strings.Contains(string(body), absent) {
			t.Errorf("the scrape has %q, want none", absent)
		}
	}
}

// A new shop exports, at 0, each strategy's series a dashboard plots: its
// orders, its lock (for the strategies that lock), its events, its batch
// sizes (for those that batch, and redis-decr's group commits), and
// redis-queue's queued orders; and no series a strategy cannot move.
func TestZeroSeriesPerStrategy(t *testing.T) {
	text := scrape(t, New())
	has := func(line string) bool { return strings.Contains(text, line+" 0\n") }
	for _, s := range strategy.All() {
		for _, o := range []string{"created", "sold_out", "duplicate_order", "unavailable"} {
			if !has(`flashsale_orders_total{outcome="` + o + `",strategy="` + string(s) + `"}`) {
				t.Errorf("%s: no zero series of %s orders", s, o)
			}
		}
		if !has(`flashsale_order_events_total{event="late_commit",strategy="` + string(s) + `"}`) {
			t.Errorf("%s: no zero series of late commits", s)
		}
		_, locks := s.LockMode()
		locks = locks || s == strategy.SQLForUpdate // the row's lock in the database
		if got := has(`flashsale_lock_acquisitions_total{outcome="acquired",strategy="` + string(s) + `"}`); got != locks {
			t.Errorf("%s: a zero series of acquired locks: %v, want %v", s, got, locks)
		}
		batches := s.Batches() || s == strategy.RedisDecr
		if got := strings.Contains(text, `flashsale_batch_buyers_count{strategy="`+string(s)+`"} 0`); got != batches {
			t.Errorf("%s: a zero series of batch sizes: %v, want %v", s, got, batches)
		}
		if got := has(`flashsale_orders_total{outcome="queued",strategy="` + string(s) + `"}`); got != s.Queues() {
			t.Errorf("%s: a zero series of queued orders: %v, want %v", s, got, s.Queues())
		}
	}
	for _, line := range []string{`flashsale_orders_queued`, `flashsale_orders_in_flight`, `flashsale_redis_master_changes_total`} {
		if !has(line) {
			t.Errorf("no %s at 0", line)
		}
	}
	if !strings.Contains(text, "\ngo_goroutines ") || !strings.Contains(text, "\nprocess_cpu_seconds_total ") {
		t.Error("the scrape has no Go runtime or process series")
	}
}

// The duration histograms observe seconds: each observation lands in the
// first bucket that holds it, and sums to the time given.
func TestDurationsInSeconds(t *testing.T) {
	m := New()
	m.Placed(strategy.SQLAtomic, "created", 3*time.Millisecond)
	m.LockWaited(strategy.Lua, "acquired", 5*time.Millisecond)
	m.Held(strategy.Lua, 40*time.Millisecond)
	for _, c := range []struct {
		h         prometheus.Observer
		sum       float64
		bucket    float64 // the first bucket's upper bound that counts it
		notBefore float64 // the bucket before it, which does not
	}{
		{m.orderSeconds.WithLabelValues("sql-atomic"), 0.003, 0.004, 0.002},
		{m.lockWait.WithLabelValues("lua"), 0.005, 0.008, 0.004},
		{m.lockHeld.WithLabelValues("lua"), 0.04, 0.064, 0.032},
	} {
		var d dto.Metric
		if err := c.h.(prometheus.Metric).Write(&d); err != nil {
			t.Fatal(err)
		}
		h := d.GetHistogram()
		if h.GetSampleCount() != 1 || h.GetSampleSum() < c.sum-1e-9 || h.GetSampleSum() > c.sum+1e-9 {
			t.Errorf("count %d, sum %v; want 1 observation of %v s", h.GetSampleCount(), h.GetSampleSum(), c.sum)
		}
		for _, b := range h.GetBucket() {
			switch ub := b.GetUpperBound(); {
			case ub > c.notBefore-1e-9 && ub < c.notBefore+1e-9 && b.GetCumulativeCount() != 0:
				t.Errorf("%v s counted in the bucket up to %v s", c.sum, ub)
			case ub > c.bucket-1e-9 && ub < c.bucket+1e-9 && b.GetCumulativeCount() != 1:
				t.Errorf("%v s not counted in the bucket up to %v s", c.sum, ub)
			}
		}
	}
}
