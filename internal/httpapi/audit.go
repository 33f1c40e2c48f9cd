package httpapi

import "github.com/flashsale/flashsale/internal/order"

// Audit is the audit of one product's sale on the wire (GET
// /api/v1/products/{id}/audit): the one record the shop writes and the
// load generator reads (package tally). Every figure is computed by SQL
// from the orders table (package order), but the Redis ones. A plain
// value: copy it freely.
type Audit struct {
	ProductID string `json:"product_id"`
	Strategy  string `json:"strategy"`
	// LockMode is Strategy's older name, for older clients: the shop
	// always sends it; a reader of the audit may leave it empty.
	LockMode        string `json:"lock_mode,omitempty"`
	InitialStock    int    `json:"initial_stock"`
	Stock           int    `json:"stock"`
	Orders          int    `json:"orders"`
	Sold            int    `json:"sold"`
	Oversold        int    `json:"oversold"`
	DuplicateOrders int    `json:"duplicate_orders"`
	Consistent      bool   `json:"consistent"`
	// RedisStock and Drift (Redis's stock less the database's) are there
	// for redis-decr and redis-queue only; RedisError says why they are
	// missing if they should be there.
	RedisStock *int   `json:"redis_stock,omitempty"`
	Drift      *int   `json:"drift,omitempty"`
	RedisError string `json:"redis_error,omitempty"`
	// QueueLength and QueuePending are a redis-queue product's backlog:
	// orders accepted and not yet written, and those a consumer holds.
	QueueLength  *int64 `json:"queue_length,omitempty"`
	QueuePending *int64 `json:"queue_pending,omitempty"`
	// Buckets are a product's stock buckets, each audited on its own
	// (sql-atomic with buckets only).
	Buckets []AuditBucket `json:"buckets,omitempty"`
	// Life is a pay-window product's units by where their orders stand;
	// nil for a product whose orders are final at once.
	Life *AuditLife `json:"life,omitempty"`
}

// AuditLife is the audit of a pay-window product's orders: per product,
// initial = stock + pending + paid. Resold counts units sold again after
// they came back; Undersold units neither sold nor back on sale.
type AuditLife struct {
	Pending   int `json:"pending"`
	Paid      int `json:"paid"`
	Expired   int `json:"expired"`
	Cancelled int `json:"cancelled"`
	Placed    int `json:"placed"`
	Resold    int `json:"resold"`
	Undersold int `json:"undersold"`
}

// AuditBucket is one stock bucket's audit.
type AuditBucket struct {
	Bucket       int  `json:"bucket"`
	InitialStock int  `json:"initial_stock"`
	Stock        int  `json:"stock"`
	Orders       int  `json:"orders"`
	Sold         int  `json:"sold"`
	Consistent   bool `json:"consistent"`
}

// toAudit puts a on the wire.
func toAudit(a order.Audit) Audit {
	j := Audit{
		ProductID:       a.ProductID,
		Strategy:        string(a.Strategy),
		LockMode:        string(a.Strategy),
		InitialStock:    a.InitialStock,
		Stock:           a.Stock,
		Orders:          a.Orders,
		Sold:            a.Sold,
		Oversold:        a.Oversold,
		DuplicateOrders: a.DuplicateOrders,
		Consistent:      a.Consistent,
		RedisStock:      a.RedisStock,
		RedisError:      a.RedisErr,
	}
	if a.RedisStock != nil {
		j.Drift = &a.Drift
	}
	if a.Strategy.Queues() {
		j.QueueLength, j.QueuePending = &a.QueueLength, &a.QueuePending
	}
	for _, b := range a.Buckets {
		j.Buckets = append(j.Buckets, AuditBucket(b))
	}
	if a.Life != nil {
		l := AuditLife(*a.Life)
		j.Life = &l
	}
	return j
}
