// Package metrics exports what one shop process does, in the Prometheus
// format, on GET /metrics: its orders by strategy and outcome, the waits
// for and the holds of its product locks, the lockers' retries and
// Redlock's votes, the events the lesson turns on (late commits, holders
// fenced out, locks lost, reservations given back), batch sizes, the
// orders at its door, and the changes of a Sentinel-managed Redis master;
// beside them the Go runtime's and the process's own.
// README.md, "Metrics", lists every one and what a workshop should look
// at.
//
// One Shop is one registry: the load generator runs three shops in one
// process, and each answers for itself.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Shop holds one shop's metrics. It is the order.Observer of the shop's
// order service and the httpapi.DoorObserver of its router, and hands a
// dlock.Observer to each of its lockers (Locker). Safe for concurrent use.
type Shop struct {
	reg *prometheus.Registry

	orders       *prometheus.CounterVec   // strategy, outcome
	orderSeconds *prometheus.HistogramVec // strategy
	lockAsks     *prometheus.CounterVec   // strategy, outcome
	lockWait     *prometheus.HistogramVec // strategy
	lockHeld     *prometheus.HistogramVec // strategy
	retries      *prometheus.CounterVec   // strategy
	votes        *prometheus.CounterVec   // node, vote
	events       *prometheus.CounterVec   // strategy, event
	batchSize    *prometheus.HistogramVec // strategy
	queued       prometheus.Gauge
	inFlight     prometheus.Gauge
	turnedAway   *prometheus.CounterVec
	masterMoves  prometheus.Counter
}

// durations are the buckets of every duration histogram: 0.5 ms to about
// 4 s, doubling, which spans an uncontended lua lock and a lock wait that
// runs out.
var durations = prometheus.ExponentialBuckets(0.0005, 2, 14)

// New returns a shop's metrics on a registry of their own, with the Go and
// process collectors.
func New() *Shop {
	byStrategy := []string{"strategy"}
	m := &Shop{
		reg: prometheus.NewRegistry(),
		orders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flashsale_orders_total",
			Help: "Orders placed, by the product's strategy (none: the product was not found or the request was invalid) and outcome (created, queued (a redis-queue order answered 202), sold_out, duplicate_order, duplicate_request, lock_timeout, busy (a redis-queue order not sent within the lock wait), version_conflict (a sql-version order outrun on every try), lock_lost, fenced_out, in_doubt, unavailable, invalid_argument, not_found, canceled, error).",
		}, []string{"strategy", "outcome"}),
		orderSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "flashsale_order_duration_seconds",
			Help:    "How long placing an order took, whatever its outcome, by strategy.",
			Buckets: durations,
		}, byStrategy),
		lockAsks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flashsale_lock_acquisitions_total",
			Help: "Asks for a product lock (one per order, or one per batch; sql-for-update: for the product's row in the database), by strategy and outcome (acquired, lock_timeout, unavailable, canceled, error).",
		}, []string{"strategy", "outcome"}),
		lockWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "flashsale_lock_wait_seconds",
			Help:    "How long an ask for a product lock waited, whether the lock came or not, by strategy.",
			Buckets: durations,
		}, byStrategy),
		lockHeld: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "flashsale_critical_section_seconds",
			Help:    "How long a product lock was held, from its grant to its release (the critical section), by strategy; for a strategy without one (off, sql-for-update, sql-version, sql-atomic), how long it held its hot row, from the answer of the statement that took it (sql-version: its read) to the commit's, or from BEGIN's on SQLite, whose one write lock BEGIN takes.",
			Buckets: durations,
		}, byStrategy),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flashsale_lock_retries_total",
			Help: "Attempts a waiting lock made again (the key was held, a Redlock vote split, or etcd did not answer), by strategy (the locker's: a batched strategy's retries count under the strategy it batches).",
		}, byStrategy),
		votes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flashsale_redlock_votes_total",
			Help: "Redlock nodes' answers to acquires, by node (its index in the shop's Redis list) and vote (granted, refused, no_answer, failed).",
		}, []string{"node", "vote"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flashsale_order_events_total",
			Help: "What happened inside orders, by strategy and event: late_commit (held back by the late-commit fault), fenced_out (a stale fencing token refused), lock_lost (the watchdog gave the lock up before the write), given_back (a redis-decr reservation returned after its order failed), reclaimed (a redis-decr reservation whose hold ran out with no order, returned by the sweep), written and refused (queued redis-queue orders this shop's consumer wrote, or dead-lettered: the database refused them and their units went back), version_moved (a sql-version try thrown away, work and all, because another buyer's write came first), and for a product with a pay window paid, expired (by this shop's sweep), cancelled (by the buyer) and returned (each unit an expired or cancelled order put back on sale).",
		}, []string{"strategy", "event"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "flashsale_batch_buyers",
			Help:    "Buyers answered per batch (one lease, many buyers), or orders written per group commit (redis-decr), by strategy.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 8),
		}, byStrategy),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "flashsale_orders_queued",
			Help: "Orders waiting at the shop's door for a slot.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "flashsale_orders_in_flight",
			Help: "Orders being worked on: past the door, not yet answered.",
		}),
		turnedAway: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flashsale_orders_turned_away_total",
			Help: "Orders the shop shed before working on them, by reason: queue_full (503 busy at once: more orders were waiting at the door than its slots serve within half the wait), wait_expired (503 busy: the order waited the whole wait for a slot), rate_limited (429: its buyer clicked faster than the per-buyer rate).",
		}, []string{"reason"}),
		masterMoves: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flashsale_redis_master_changes_total",
			Help: "Times the Sentinels named another address for the shop's Redis master (--redis-sentinel; 0 without): the failovers this shop saw.",
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.orders, m.orderSeconds, m.lockAsks, m.lockWait, m.lockHeld, m.retries,
		m.votes, m.events, m.batchSize, m.queued, m.inFlight, m.turnedAway,
		m.masterMoves,
	)
	m.zeros()
	return m
}

// zeros creates the series a dashboard plots from the start, at 0, so
// that a rate is there before the first event rather than appearing with
// it.
func (m *Shop) zeros() {
	for _, r := range []string{httpapi.ShedQueueFull, httpapi.ShedWaitExpired, httpapi.ShedRateLimited} {
		m.turnedAway.WithLabelValues(r)
	}
	for _, s := range strategy.All() {
		for _, o := range []string{"created", "sold_out", "duplicate_order", "unavailable"} {
			m.orders.WithLabelValues(string(s), o)
		}
		m.orderSeconds.WithLabelValues(string(s))
		if mode, ok := s.LockMode(); ok {
			m.retries.WithLabelValues(string(mode))
		}
		if _, ok := s.LockMode(); ok || s == strategy.SQLForUpdate { // sql-for-update: the row's lock
			m.lockAsks.WithLabelValues(string(s), "acquired")
			m.lockWait.WithLabelValues(string(s))
		}
		if h, ok := s.Holds(); ok && h.Free == "" { // a lock, or a hot row held across round trips
			m.lockHeld.WithLabelValues(string(s))
		}
		if s == strategy.SQLVersion {
			m.orders.WithLabelValues(string(s), "version_conflict")
			m.events.WithLabelValues(string(s), string(order.EventVersionMoved))
		}
		if s.Batches() || s == strategy.RedisDecr { // redis-decr: its group commits
			m.batchSize.WithLabelValues(string(s))
		}
		for _, e := range []order.Event{order.EventLateCommit, order.EventFencedOut, order.EventLockLost, order.EventGivenBack, order.EventReclaimed,
			order.EventPaid, order.EventExpired, order.EventCancelled, order.EventReturned} {
			m.events.WithLabelValues(string(s), string(e))
		}
		if s.Queues() {
			m.orders.WithLabelValues(string(s), order.OutcomeQueued)
			m.events.WithLabelValues(string(s), string(order.EventWritten))
			m.events.WithLabelValues(string(s), string(order.EventRefused))
		}
	}
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, if the scraper asks for it).
func (m *Shop) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// label is a strategy as a label value: "none" before the product was known.
func label(s strategy.Name) string {
	if s == "" {
		return "none"
	}
	return string(s)
}

// Placed counts an order (order.Observer).
func (m *Shop) Placed(s strategy.Name, outcome string, d time.Duration) {
	m.orders.WithLabelValues(label(s), outcome).Inc()
	m.orderSeconds.WithLabelValues(label(s)).Observe(d.Seconds())
}

// LockWaited counts an ask for a product lock (order.Observer).
func (m *Shop) LockWaited(s strategy.Name, outcome string, d time.Duration) {
	m.lockAsks.WithLabelValues(label(s), outcome).Inc()
	m.lockWait.WithLabelValues(label(s)).Observe(d.Seconds())
}

// Held records a critical section (order.Observer).
func (m *Shop) Held(s strategy.Name, d time.Duration) {
	m.lockHeld.WithLabelValues(label(s)).Observe(d.Seconds())
}

// Happened counts an event inside an order (order.Observer).
func (m *Shop) Happened(s strategy.Name, e order.Event) {
	m.events.WithLabelValues(label(s), string(e)).Inc()
}

// Batched records a batch's size (order.Observer).
func (m *Shop) Batched(s strategy.Name, buyers int) {
	m.batchSize.WithLabelValues(label(s)).Observe(float64(buyers))
}

// Queued moves the door's queue gauge (httpapi.DoorObserver).
func (m *Shop) Queued(delta int) { m.queued.Add(float64(delta)) }

// InFlight moves the in-flight gauge (httpapi.DoorObserver).
func (m *Shop) InFlight(delta int) { m.inFlight.Add(float64(delta)) }

// TurnedAway counts an order shed at the door, by why
// (httpapi.DoorObserver).
func (m *Shop) TurnedAway(reason string) { m.turnedAway.WithLabelValues(reason).Inc() }

// RedisMasterChanged counts a change of the Sentinel-managed master's
// address. Any goroutine may call it.
func (m *Shop) RedisMasterChanged() { m.masterMoves.Inc() }

// Locker returns the dlock.Observer for the shop's locker of mode.
func (m *Shop) Locker(mode dlock.Mode) dlock.Observer {
	return lockerObserver{m: m, retries: m.retries.WithLabelValues(string(mode))}
}

// lockerObserver is one locker's dlock.Observer.
type lockerObserver struct {
	m       *Shop
	retries prometheus.Counter
}

func (o lockerObserver) Retried() { o.retries.Inc() }

func (o lockerObserver) Voted(node int, v dlock.Vote) {
	o.m.votes.WithLabelValues(strconv.Itoa(node), string(v)).Inc()
}
