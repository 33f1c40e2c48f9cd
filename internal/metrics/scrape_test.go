package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// scrape returns the text a scrape of m reads.
func scrape(t *testing.T, m *Shop) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recent is a shop with many products under test, which records how many
// a scrape asked for and the deadline of its audits.
// recent's figures are atomics: a scrape runs the collectors, which both
// ask for the recent products, at once.
type recent struct {
	fakeShop
	asked    *atomic.Int64
	deadline *atomic.Int64 // a time.Duration
}

func (r recent) Recent(n int) []stock.Product {
	r.asked.Store(int64(n))
	return r.fakeShop.Recent(n)
}

func (r recent) Audit(ctx context.Context, id string) (order.Audit, error) {
	if d, ok := ctx.Deadline(); ok {
		r.deadline.Store(int64(time.Until(d)))
	}
	return r.fakeShop.Audit(ctx, id)
}

// A scrape audits at most a dozen products, within one bounded wait, and
// leaves out a queue whose backlog Redis did not give.
func TestScrapeIsBounded(t *testing.T) {
	var asked, deadline atomic.Int64
	shop := recent{fakeShop: fakeShop{
		products: []stock.Product{{ID: "q", Strategy: strategy.RedisQueue}},
		audits:   map[string]order.Audit{"q": {Stock: 1}},
		backlogs: map[string]redisqueue.Backlog{},
		failing:  map[string]bool{"q": true},
	}, asked: &asked, deadline: &deadline}
	m := New()
	m.Audits(shop)
	m.Queues(shop)
	text := scrape(t, m)
	if n, d := int(asked.Load()), time.Duration(deadline.Load()); n != auditedProducts || d <= 0 || d > auditTimeout {
		t.Errorf("asked for %d products, audits within %v; want %d within %v", n, d, auditedProducts, auditTimeout)
	}
	if strings.Contains(text, `flashsale_queue_length{product="q"`) || !strings.Contains(text, `flashsale_product_stock_units{product="q",strategy="redis-queue"} 1`) {
		t.Errorf("scrape: want q's audit and no queue gauges for it (its backlog failed):\n%s", text)
	}
}

// A scraper that asks for OpenMetrics gets it; one that does not gets the
// Prometheus text format.
func TestHandlerFormats(t *testing.T) {
	srv := httptest.NewServer(New().Handler())
	defer srv.Close()
	for accept, want := range map[string]string{
		"application/openmetrics-text; version=1.0.0": "application/openmetrics-text",
		"": "text/plain",
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept", accept)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, want) || !strings.Contains(string(b), "flashsale_orders_total") {
			t.Errorf("Accept %q: %s, want %s with the orders", accept, ct, want)
		}
	}
}
