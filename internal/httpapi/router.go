// Package httpapi owns the shop's HTTP API: the routes listed below (and,
// for users, in README.md, "The HTTP API"), strict JSON decoding, the
// admin bearer-token check, the buyer-token check (buyer.go), the one
// table that maps errors to status codes, request ids and access logs,
// and the health and readiness probes.
//
// It holds no state of its own: the product store and the order service do
// the work, and every handler passes the request's context down to them.
//
//	POST /api/v1/products           admin   201 product
//	GET  /api/v1/products/:id       anyone  200 product
//	GET  /api/v1/products/:id/audit admin   200 audit
//	GET  /api/v1/products/:id/events admin  200 this process's events
//	POST /api/v1/orders             buyer   201 order, or 202 queued (redis-queue) with a Location
//	GET  /api/v1/orders/:id         anyone  200 where the order stands: queued, created or refused, and its state
//	POST /api/v1/orders/:id/pay     buyer   200 the order, paid
//	POST /api/v1/orders/:id/cancel  buyer   200 the order, cancelled, its units back on sale
//	GET  /healthz                   anyone  200 while the process serves
//	GET  /readyz                    anyone  200 when the database, the Redis quorum, etcd's and ZooKeeper's answer, else 503
//	GET  /metrics                   anyone  Prometheus metrics, when Deps.Metrics is set
//
// Errors are {"error":{"code":"...","message":"..."}}; see errors.go for the
// complete list of codes. Bodies are strict (decode.go): JSON only, at most
// 16 KiB, no unknown fields, every required field present. Orders queue for
// one of a limited number of slots before they touch Redis (admission.go).
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
)

// Products is what the API needs from the product store; *stock.Store
// implements it. Get validates the id (the API only decodes it) and
// refuses a bad one with an error wrapping stock.ErrInvalid.
type Products interface {
	Get(ctx context.Context, id string) (stock.Product, error)
}

// Orders is what the API needs from the order flow; *order.Service
// implements it. AddProduct, Place and Audit validate their input (see
// stock.Store.Create and order.Request.Validate) and refuse bad values
// with an error wrapping stock.ErrInvalid or an *order.FieldError.
type Orders interface {
	AddProduct(ctx context.Context, p stock.Product) (stock.Product, error)
	Place(ctx context.Context, req order.Request) (order.Order, error)
	Audit(ctx context.Context, productID string) (order.Audit, error)
	Events(productID string) order.Events
	// HasOwnQueue reports whether the product's orders already wait in a
	// queue of the shop's own (for a batch, or for a shared round trip to
	// Redis), which lets them past the door (see admission).
	HasOwnQueue(ctx context.Context, productID string) bool
}

// Statuses is what the routes of one order (/api/v1/orders/:id) and the
// readiness probe need from the order flow; *order.Service implements
// it. OrderStatus, Pay and Cancel validate the id and refuse a bad one
// with an *order.FieldError.
type Statuses interface {
	OrderStatus(ctx context.Context, id string) (order.OrderStatus, error)
	// Pay and Cancel change a written order's state (package order's
	// life) and answer as OrderStatus does.
	Pay(ctx context.Context, id string) (order.OrderStatus, error)
	Cancel(ctx context.Context, id string) (order.OrderStatus, error)
	// QueueProblem says why the shop's queue consumers cannot write, ""
	// if they can.
	QueueProblem() string
}

// Deps are the router's collaborators. Products and Orders are required;
// DB, Redis and RedisMaster are only asked by /readyz. They must be safe for
// concurrent use, since every request runs on its own goroutine.
type Deps struct {
	Products Products
	Orders   Orders
	// Statuses answers GET /api/v1/orders/:id; nil: that route answers
	// 404 for every id.
	Statuses Statuses
	DB       *gorm.DB
	// Redis are the independent Redis nodes, in order. Without
	// RedisMaster, Redis[0] also serves lua, naive, fenced, the dedupe
	// locks and redis-decr.
	Redis []*redis.Client
	// RedisMaster, if not nil, is the Sentinel-managed master that serves
	// those instead of Redis[0].
	RedisMaster RedisMaster
	// AdminToken guards the admin routes. Empty closes them: they answer
	// 403 and say how to set a token.
	AdminToken string
	// BuyerSecret, if not empty, is the key of the buyers' tokens
	// (package buyertoken): placing an order (and acting on one) then
	// needs an X-Buyer-Token signed with it for the order's buyer, or
	// gets 401 (missing, forged, expired) or 403 (another buyer's).
	// Empty: open, anyone may act for any buyer (buyer.go).
	BuyerSecret string
	// MaxInFlightOrders caps the orders this router works on at once,
	// but for those that wait in a queue of the shop's own
	// (Orders.HasOwnQueue); more wait at the door in arrival order, at most
	// OrderQueueWait, then get 503 busy. Zero or less means no limit. See
	// admission.go for why a flash-sale shop wants one.
	MaxInFlightOrders int
	// OrderQueueWait bounds the wait for an order slot; zero means only
	// the request's context bounds it. An order that would wait more than
	// half of it for the orders ahead of it is turned away at once (see
	// admission.go).
	OrderQueueWait time.Duration
	// BuyerRate, if positive, is how many orders per second one buyer
	// (user_id) may send to this router, with bursts of BuyerBurst (at
	// least 1): the clicks beyond it get 429 rate_limited before they
	// queue (ratelimit.go). Zero or less: no limit.
	BuyerRate  float64
	BuyerBurst int
	// Logger receives one line per request and panics; nil means
	// slog.Default().
	Logger *slog.Logger
	// Door hears of the orders at the door (metrics); nil means nobody
	// does.
	Door DoorObserver
	// Metrics, if not nil, serves GET /metrics (package metrics).
	Metrics http.Handler
	// Etcd, if not nil, is the cluster strategy etcd locks on: /readyz
	// asks it for a quorum read.
	Etcd Readier
	// ZooKeeper, if not nil, is the ensemble strategy zookeeper locks on:
	// /readyz asks it for a read.
	ZooKeeper Readier
}

// RedisMaster is a Redis master that Sentinels manage (package app's, with
// --redis-sentinel). /readyz calls its methods, concurrently, and honours
// their errors as reasons to answer 503.
type RedisMaster interface {
	// Addr asks the Sentinels where the master is now and returns its
	// host:port, or an error whose message says why not. The message goes
	// into the 503, to anyone: it must name no secret.
	Addr(ctx context.Context) (string, error)
	// Ping pings the master through the shop's own client.
	Ping(ctx context.Context) error
}

// DoorObserver hears of the orders at the shop's door: how many wait for a
// slot, how many are being worked on, and how many gave up waiting. Its
// methods are called concurrently, from the requests' goroutines, and must
// return at once.
type DoorObserver interface {
	// Queued is called with +1 when a valid order starts waiting for a
	// slot and -1 when it stops (it got one, or gave up).
	Queued(delta int)
	// InFlight is called with +1 when an order gets its slot and -1 when
	// it has its answer.
	InFlight(delta int)
	// TurnedAway is called when an order is turned away at the door, with
	// why: ShedQueueFull (503 busy at once: more were waiting than the
	// slots serve within half the wait), ShedWaitExpired (503 busy: its wait
	// for a slot ran out; not when its caller hung up first) or
	// ShedRateLimited (429 rate_limited: its buyer clicked too often).
	TurnedAway(reason string)
}

// api binds the handlers to their dependencies.
type api struct {
	products Products
	orders   Orders
	statuses Statuses // nil: no order is known
	db       *gorm.DB
	redis    []*redis.Client
	master   RedisMaster // nil: Redis[0] serves the single-node strategies
	door     *admission  // never nil; it may admit every order at once
	limit    *buyerLimit // nil: no per-buyer rate
	etcd     Readier     // nil: no etcd to ask
	zk       Readier     // nil: no ZooKeeper to ask
}

var releaseMode sync.Once

// NewRouter returns the shop's HTTP handler with every route, the request
// id and access log middleware, and panic recovery. It does not start a
// server (package app does) and is what tests call directly, with
// httptest. The returned engine is safe for concurrent use; NewRouter
// itself may be called any number of times, e.g. once per shop instance.
func NewRouter(deps Deps) *gin.Engine {
	// Release mode silences gin's debug printing; it is a process-wide
	// setting, so it is set once, before the first engine is built.
	releaseMode.Do(func() { gin.SetMode(gin.ReleaseMode) })
	logger := deps.Logger
	if logger == nil {
		logger = slog.Default()
	}
	a := &api{products: deps.Products, orders: deps.Orders, statuses: deps.Statuses, db: deps.DB, redis: deps.Redis,
		master: deps.RedisMaster, door: newAdmission(deps.MaxInFlightOrders, deps.OrderQueueWait, deps.Door), etcd: deps.Etcd, zk: deps.ZooKeeper,
		limit: newBuyerLimit(deps.BuyerRate, deps.BuyerBurst)}

	r := gin.New() // no default logger or recovery: ours are below
	r.HandleMethodNotAllowed = true
	_ = r.SetTrustedProxies(nil) // ClientIP is the peer address; no forwarded headers are trusted
	r.Use(requestLog(logger), recovery(logger))
	r.NoRoute(func(c *gin.Context) {
		writeError(c, &requestError{kind: errRouteNotFound, msg: "no route " + c.Request.Method + " " + c.Request.URL.Path})
	})
	r.NoMethod(func(c *gin.Context) {
		writeError(c, &requestError{kind: errMethod, msg: "method " + c.Request.Method + " not allowed on " + c.Request.URL.Path})
	})

	admin := adminOnly(deps.AdminToken)
	buyer := buyerOnly([]byte(deps.BuyerSecret))
	v1 := r.Group("/api/v1")
	v1.POST("/products", admin, a.createProduct)
	v1.GET("/products/:id", a.getProduct)
	v1.GET("/products/:id/audit", admin, a.auditProduct)
	v1.GET("/products/:id/events", admin, a.productEvents)
	v1.POST("/orders", buyer, a.placeOrder)
	v1.GET("/orders/:id", a.orderStatus)
	v1.POST("/orders/:id/pay", buyer, a.payOrder)
	v1.POST("/orders/:id/cancel", buyer, a.cancelOrder)

	r.GET("/healthz", a.healthz)
	r.GET("/readyz", a.readyz)
	if deps.Metrics != nil {
		r.GET("/metrics", gin.WrapH(deps.Metrics))
	}
	return r
}
