package httpapi_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/httpapi"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
)

// heldOrders is an order service whose Place reports each call on entered
// and then waits for release to close.
type heldOrders struct {
	entered chan string
	release chan struct{}
	batched string // the product whose orders queue for a batch
}

func newHeldOrders() *heldOrders {
	return &heldOrders{entered: make(chan string, 8), release: make(chan struct{})}
}

func (h *heldOrders) Place(ctx context.Context, req order.Request) (order.Order, error) {
	h.entered <- req.UserID
	select {
	case <-h.release:
		return order.Order{ID: "o-" + req.UserID, UserID: req.UserID, ProductID: req.ProductID, Quantity: req.Quantity}, nil
	case <-ctx.Done():
		return order.Order{}, ctx.Err()
	}
}

func (h *heldOrders) Audit(context.Context, string) (order.Audit, error) {
	return order.Audit{}, errors.New("heldOrders: no audit")
}

func (h *heldOrders) AddProduct(context.Context, stock.Product) (stock.Product, error) {
	return stock.Product{}, errors.New("heldOrders: no products")
}

func (h *heldOrders) Events(string) order.Events { return order.Events{} }

func (h *heldOrders) HasOwnQueue(_ context.Context, product string) bool {
	return product != "" && product == h.batched
}

func orderBy(user string) request {
	return request{method: "POST", path: "/api/v1/orders", body: `{"user_id":"` + user + `","product_id":"p","quantity":1}`}
}

// waitEntered returns the next buyer whose order reached Place, or fails t
// after a few seconds.
func waitEntered(t *testing.T, orders *heldOrders) string {
	t.Helper()
	select {
	case user := <-orders.entered:
		return user
	case <-time.After(5 * time.Second):
		t.Fatal("no order reached Place within 5s")
		return ""
	}
}

// TestBusy: with every order slot taken, an order waits at most the queue
// wait and then gets 503 busy with Retry-After; an invalid order is
// refused at once with 400, without queueing.
func TestBusy(t *testing.T) {
	orders := newHeldOrders()
	h := httpapi.NewRouter(httpapi.Deps{Orders: orders, MaxInFlightOrders: 1,
		OrderQueueWait: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})

	first := make(chan int, 1)
	go func() { first <- do(t, h, orderBy("alice")).Code }()
	if got := waitEntered(t, orders); got != "alice" {
		t.Fatalf("first order in: got %q, want alice", got)
	}

	rec := do(t, h, orderBy("bob"))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("second order: status = %d, want 503; body %s", rec.Code, rec.Body)
	}
	if got, want := decodeError(t, rec).Error.Code, "busy"; got != want {
		t.Errorf("second order: code = %q, want %q", got, want)
	}
	if got, want := rec.Header().Get("Retry-After"), "1"; got != want {
		t.Errorf("second order: Retry-After = %q, want %q", got, want)
	}

	bad := orderBy("carol")
	bad.body = `{"user_id":"carol","product_id":"p","quantity":0}`
	rec = do(t, h, bad)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("invalid order at a full door: status = %d, want 400; body %s", rec.Code, rec.Body)
	}

	close(orders.release)
	if got := <-first; got != http.StatusCreated {
		t.Errorf("first order: status = %d, want 201", got)
	}
}

// TestNoOrderLimit: a negative MaxInFlightOrders admits every order at once.
func TestNoOrderLimit(t *testing.T) {
	orders := newHeldOrders()
	h := httpapi.NewRouter(httpapi.Deps{Orders: orders, MaxInFlightOrders: -1,
		OrderQueueWait: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})

	codes := make(chan int, 2)
	for _, user := range []string{"alice", "bob"} {
		go func() { codes <- do(t, h, orderBy(user)).Code }()
	}
	waitEntered(t, orders)
	waitEntered(t, orders) // both are inside Place together
	close(orders.release)
	for range 2 {
		if got := <-codes; got != http.StatusCreated {
			t.Errorf("status = %d, want 201", got)
		}
	}
}

// TestBatchedOrdersPassTheDoor: a batched product's buyers queue in their
// batch, not at the door. With the door's one slot taken, a batched order
// still reaches Place, as many as come; an unbatched one is turned away.
func TestBatchedOrdersPassTheDoor(t *testing.T) {
	orders := newHeldOrders()
	orders.batched = "b"
	h := httpapi.NewRouter(httpapi.Deps{Orders: orders, MaxInFlightOrders: 1,
		OrderQueueWait: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	batchedBy := func(user string) request {
		r := orderBy(user)
		r.body = `{"user_id":"` + user + `","product_id":"b","quantity":1}`
		return r
	}

	codes := make(chan int, 3)
	go func() { codes <- do(t, h, orderBy("alice")).Code }()
	waitEntered(t, orders) // alice holds the one slot
	for _, user := range []string{"bob", "carol"} {
		go func() { codes <- do(t, h, batchedBy(user)).Code }()
	}
	waitEntered(t, orders)
	waitEntered(t, orders) // bob and carol are inside Place beside alice

	if rec := do(t, h, orderBy("dave")); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("unbatched order at a full door: status = %d, want 503", rec.Code)
	}
	close(orders.release)
	for range 3 {
		if got := <-codes; got != http.StatusCreated {
			t.Errorf("status = %d, want 201", got)
		}
	}
}

// TestRateLimited: with a per-buyer rate of one click every 4 s and a
// burst of 1, a buyer's second click gets 429 rate_limited before it
// reaches Place, with a Retry-After no sooner than his bucket holds a
// token again (else his retry is refused too); another buyer is not held
// up.
func TestRateLimited(t *testing.T) {
	orders := newHeldOrders()
	close(orders.release)
	h := httpapi.NewRouter(httpapi.Deps{Orders: orders, BuyerRate: 0.25, BuyerBurst: 1,
		Logger: slog.New(slog.DiscardHandler)})
	if rec := do(t, h, orderBy("alice")); rec.Code != http.StatusCreated {
		t.Fatalf("alice's first click: status = %d, want 201; body %s", rec.Code, rec.Body)
	}
	rec := do(t, h, orderBy("alice"))
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("alice's second click: status = %d, want 429; body %s", rec.Code, rec.Body)
	}
	if got, want := decodeError(t, rec).Error.Code, "rate_limited"; got != want {
		t.Errorf("code = %q, want %q", got, want)
	}
	after, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil {
		t.Fatalf("Retry-After %q: %v", rec.Header().Get("Retry-After"), err)
	}
	if after < 4 {
		t.Errorf("Retry-After = %d s, but alice's bucket has no token for another 4 s", after)
	}
	if rec := do(t, h, orderBy("bob")); rec.Code != http.StatusCreated {
		t.Errorf("bob's click: status = %d, want 201", rec.Code)
	}
	if got := len(orders.entered); got != 2 {
		t.Errorf("orders that reached Place: %d, want 2", got)
	}
}
