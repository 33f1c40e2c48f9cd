package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
)

// Backlogs is what the queue gauges need from the order service;
// *order.Service implements it.
type Backlogs interface {
	// Recent returns the products under test, newest first, at most n.
	Recent(n int) []stock.Product
	// QueueBacklog reads a redis-queue product's backlog from Redis.
	QueueBacklog(ctx context.Context, product string) (redisqueue.Backlog, error)
}

// Queues adds gauges read from Redis at every scrape, for the redis-queue
// products among those a recent sale went to (as Audits chooses them): the
// queue's length (orders accepted and not yet written), its consumer lag
// (those no consumer has read yet) and the entries pending (read by a
// consumer, not yet acknowledged), by product and strategy. Call it once,
// before the first scrape.
func (m *Shop) Queues(b Backlogs) { m.reg.MustRegister(queueCollector{b}) }

type queueCollector struct{ b Backlogs }

var (
	queueLengthDesc = prometheus.NewDesc("flashsale_queue_length",
		"Orders of a redis-queue product accepted (202) and not yet written to the database.", productLabels, nil)
	queueLagDesc = prometheus.NewDesc("flashsale_queue_lag",
		"Orders of a redis-queue product that no consumer has read yet: the consumers' lag.", productLabels, nil)
	queuePendingDesc = prometheus.NewDesc("flashsale_queue_pending",
		"Orders of a redis-queue product read by a consumer and not yet acknowledged: being written, or held by a consumer that died or cannot reach the database.", productLabels, nil)
)

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueLengthDesc, queueLagDesc, queuePendingDesc} {
		ch <- d
	}
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	for _, p := range c.b.Recent(auditedProducts) {
		if !p.Strategy.Queues() {
			continue
		}
		b, err := c.b.QueueBacklog(ctx, p.ID)
		if err != nil {
			continue
		}
		labels := []string{p.ID, string(p.Strategy)}
		ch <- prometheus.MustNewConstMetric(queueLengthDesc, prometheus.GaugeValue, float64(b.Length), labels...)
		ch <- prometheus.MustNewConstMetric(queueLagDesc, prometheus.GaugeValue, float64(b.Lag()), labels...)
		ch <- prometheus.MustNewConstMetric(queuePendingDesc, prometheus.GaugeValue, float64(b.Pending), labels...)
	}
}
