package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/flashsale/flashsale/internal/order"
)

// placeOrderRequest is the body of POST /api/v1/orders; every field is
// required.
type placeOrderRequest struct {
	UserID    *string `json:"user_id"`
	ProductID *string `json:"product_id"`
	Quantity  *int    `json:"quantity"`
}

// request checks that every field is present and converts the body to an
// order.Request. The values are the order package's to judge
// (order.Request.Validate).
func (r *placeOrderRequest) request() (order.Request, error) {
	if err := required("user_id", r.UserID); err != nil {
		return order.Request{}, err
	}
	if err := required("product_id", r.ProductID); err != nil {
		return order.Request{}, err
	}
	if err := required("quantity", r.Quantity); err != nil {
		return order.Request{}, err
	}
	return order.Request{UserID: *r.UserID, ProductID: *r.ProductID, Quantity: *r.Quantity}, nil
}

// orderJSON is an order on the wire.
type orderJSON struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	ProductID string    `json:"product_id"`
	Quantity  int       `json:"quantity"`
	Strategy  string    `json:"strategy"`
	LockMode  string    `json:"lock_mode"` // strategy's older name, for older clients
	CreatedAt time.Time `json:"created_at"`
	// Status is "queued" in a 202 (redis-queue), absent in a 201.
	Status string `json:"status,omitempty"`
}

func toOrderJSON(o order.Order) orderJSON {
	return orderJSON{
		ID:        o.ID,
		UserID:    o.UserID,
		ProductID: o.ProductID,
		Quantity:  o.Quantity,
		Strategy:  string(o.Strategy),
		LockMode:  string(o.Strategy),
		CreatedAt: o.CreatedAt.UTC(),
	}
}

// placeOrder handles POST /api/v1/orders: 201 with the order.
func (a *api) placeOrder(c *gin.Context) {
	var body placeOrderRequest
	if err := decodeJSON(c, &body); err != nil {
		writeError(c, err)
		return
	}
	req, err := body.request()
	if err != nil {
		writeError(c, err)
		return
	}
	// Only valid orders queue for a slot, so the order package judges the
	// fields here already; Place would refuse the same ones.
	if err := req.Validate(); err != nil {
		writeError(c, err)
		return
	}
	// Only the buyer orders for themselves (buyer.go); checked before the
	// rate, so that forged clicks spend nobody's allowance.
	if err := actFor(c, req.UserID); err != nil {
		writeError(c, err)
		return
	}
	// A buyer clicking faster than the per-buyer rate is turned away
	// before the door: the anti-bot guard (ratelimit.go).
	if ok, retryIn := a.limit.allow(req.UserID); !ok {
		a.door.obs.TurnedAway(ShedRateLimited)
		writeError(c, &rateLimitedError{retryIn: retryIn})
		return
	}
	if !a.orders.HasOwnQueue(c.Request.Context(), req.ProductID) {
		leave, err := a.door.enter(c.Request.Context())
		if err != nil {
			writeError(c, err)
			return
		}
		defer leave()
	}
	o, err := a.orders.Place(c.Request.Context(), req)
	if err != nil {
		writeError(c, err)
		return
	}
	if o.Queued {
		// Accepted into the product's queue (redis-queue): written later;
		// the Location says where to ask how it went.
		j := toOrderJSON(o)
		j.Status = order.StatusQueued
		c.Header("Location", "/api/v1/orders/"+o.ID)
		c.PureJSON(http.StatusAccepted, j)
		return
	}
	c.PureJSON(http.StatusCreated, toOrderJSON(o))
}

// orderStatusJSON is GET /api/v1/orders/:id's answer: the order as
// written (created), or what Redis knows of it (queued, refused).
type orderStatusJSON struct {
	ID        string     `json:"id"`
	ProductID string     `json:"product_id"`
	Status    string     `json:"status"`
	UserID    string     `json:"user_id,omitempty"`
	Quantity  int        `json:"quantity,omitempty"`
	Strategy  string     `json:"strategy,omitempty"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	// Code and Reason say why a refused order was refused.
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// State is where a created order stands in its life: pending,
	// paid, expired or cancelled; Deadline, while it is pending, when it
	// expires by the database's clock.
	State    string     `json:"state,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// orderStatus handles GET /api/v1/orders/:id: 200 with where the order
// stands; 404 for an id no shop knows; 400 for a malformed id, which is
// never sent to Redis or the database.
func (a *api) orderStatus(c *gin.Context) {
	if a.statuses == nil {
		writeError(c, &requestError{kind: errRouteNotFound, msg: "no order " + c.Param("id")})
		return
	}
	st, err := a.statuses.OrderStatus(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, toOrderStatusJSON(st))
}

// payOrder handles POST /api/v1/orders/:id/pay, for the order's buyer
// (buyerOnly): 200 with the order, paid (the same answer for a payment
// sent twice); 409 expired or cancelled; 404 for an unknown id; 401 or
// 403 for a token that is not the buyer's.
func (a *api) payOrder(c *gin.Context) {
	a.changeOrder(c, a.statuses.Pay)
}

// cancelOrder handles POST /api/v1/orders/:id/cancel, for the order's
// buyer (buyerOnly): 200 with the order, cancelled, its units back on
// sale; 409 already_paid or expired; 404 for an unknown id; 401 or 403
// for a token that is not the buyer's.
func (a *api) cancelOrder(c *gin.Context) {
	a.changeOrder(c, a.statuses.Cancel)
}

// changeOrder runs change on the order the path names, for its buyer
// only, and answers with where it stands after. The order is read first
// and its buyer checked (actFor) before anything changes: an order's
// buyer never changes, so the check cannot go stale. An order not yet
// written (queued, refused) has nothing to pay or cancel: 404, and change
// is not run, so an order written between the read and the change is
// never changed for whoever asked.
func (a *api) changeOrder(c *gin.Context, change func(ctx context.Context, id string) (order.OrderStatus, error)) {
	if a.statuses == nil {
		writeError(c, &requestError{kind: errRouteNotFound, msg: "no order " + c.Param("id")})
		return
	}
	id := c.Param("id")
	st, err := a.statuses.OrderStatus(c.Request.Context(), id)
	if err == nil && st.Status != order.StatusCreated {
		err = fmt.Errorf("%w %q: not written yet (%s), nothing to pay or cancel", order.ErrUnknownOrder, id, st.Status)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	if err := actFor(c, st.Order.UserID); err != nil {
		writeError(c, err)
		return
	}
	st, err = change(c.Request.Context(), id)
	if err != nil {
		writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, toOrderStatusJSON(st))
}

// toOrderStatusJSON is st on the wire.
func toOrderStatusJSON(st order.OrderStatus) orderStatusJSON {
	j := orderStatusJSON{ID: st.ID, ProductID: st.ProductID, Status: st.Status, Code: st.Code, Reason: st.Reason}
	if st.Status == order.StatusCreated {
		o := st.Order
		at := o.CreatedAt.UTC()
		j.UserID, j.Quantity, j.Strategy, j.CreatedAt = o.UserID, o.Quantity, string(o.Strategy), &at
		j.State = string(st.State)
		if !st.Deadline.IsZero() {
			d := st.Deadline.UTC()
			j.Deadline = &d
		}
	}
	return j
}

// auditProduct handles GET /api/v1/products/:id/audit (admin): 200 with the
// audit. Audit checks the id.
func (a *api) auditProduct(c *gin.Context) {
	audit, err := a.orders.Audit(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, toAudit(audit))
}
