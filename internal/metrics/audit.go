package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
)

// Auditor is what the audit gauges need from the order service;
// *order.Service implements it.
type Auditor interface {
	// Recent returns the products under test, newest first, at most n.
	Recent(n int) []stock.Product
	// Audit counts a product's sale in the database.
	Audit(ctx context.Context, productID string) (order.Audit, error)
}

// auditedProducts bounds the products whose audits a scrape reads: the
// product label's values are the products under test, never more.
const auditedProducts = 12

// auditTimeout bounds the audits of one scrape.
const auditTimeout = 2 * time.Second

// Audits adds gauges read from the database at every scrape, for the
// products a recent sale went to (at most a dozen, created within the
// hour): units left, sold and oversold, and duplicate orders, by product
// and strategy. This is the audit's own count, the one the load
// generator's table shows, so a dashboard shows an oversell as it happens.
// Call it once, before the first scrape.
func (m *Shop) Audits(a Auditor) { m.reg.MustRegister(auditCollector{a}) }

type auditCollector struct{ a Auditor }

var (
	productLabels = []string{"product", "strategy"}
	stockDesc     = prometheus.NewDesc("flashsale_product_stock_units",
		"Units left of a product under test, as its database row says (the audit).", productLabels, nil)
	soldDesc = prometheus.NewDesc("flashsale_product_sold_units",
		"Units sold of a product under test: the sum of its order rows (the audit).", productLabels, nil)
	oversoldDesc = prometheus.NewDesc("flashsale_product_oversold_units",
		"Units sold beyond a product's initial stock (the audit): above 0, the strategy failed.", productLabels, nil)
	duplicatesDesc = prometheus.NewDesc("flashsale_product_duplicate_orders",
		"Orders beyond the first per buyer of a product under test (the audit).", productLabels, nil)
	auditErrDesc = prometheus.NewDesc("flashsale_product_audit_errors",
		"Audits that failed in this scrape (the database did not answer in time).", nil, nil)
)

func (c auditCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{stockDesc, soldDesc, oversoldDesc, duplicatesDesc, auditErrDesc} {
		ch <- d
	}
}

func (c auditCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	failed := 0
	for _, p := range c.a.Recent(auditedProducts) {
		a, err := c.a.Audit(ctx, p.ID)
		if err != nil {
			failed++
			continue
		}
		labels := []string{p.ID, string(p.Strategy)}
		ch <- prometheus.MustNewConstMetric(stockDesc, prometheus.GaugeValue, float64(a.Stock), labels...)
		ch <- prometheus.MustNewConstMetric(soldDesc, prometheus.GaugeValue, float64(a.Sold), labels...)
		ch <- prometheus.MustNewConstMetric(oversoldDesc, prometheus.GaugeValue, float64(a.Oversold), labels...)
		ch <- prometheus.MustNewConstMetric(duplicatesDesc, prometheus.GaugeValue, float64(a.DuplicateOrders), labels...)
	}
	ch <- prometheus.MustNewConstMetric(auditErrDesc, prometheus.GaugeValue, float64(failed))
}
