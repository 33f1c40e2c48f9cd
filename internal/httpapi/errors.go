package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/flashsale/flashsale/internal/order"
)

// Errors the HTTP layer raises itself. The domain's own sentinels (stock.*,
// order.*) are mapped by the same table below.
var (
	// errInvalidArgument marks a body the API cannot decode: not JSON,
	// unknown or missing fields, wrong types. Values that decode are the
	// domain's to judge (order.ErrInvalid, stock.ErrInvalid).
	errInvalidArgument = errors.New("httpapi: invalid argument")
	errUnauthorized    = errors.New("httpapi: unauthorized")
	errForbidden       = errors.New("httpapi: forbidden")
	errRouteNotFound   = errors.New("httpapi: no such route")
	errMethod          = errors.New("httpapi: method not allowed")
	errNotReady        = errors.New("httpapi: not ready")
	// errBusy marks an order turned away at the shop's door: no order slot
	// came free within the wait (admission.go). Nothing reached Redis or
	// the database; the buyer may retry.
	errBusy = errors.New("httpapi: shop busy")
	// errRateLimited marks an order whose buyer clicked more often than
	// the per-buyer rate allows (ratelimit.go). Nothing was written.
	errRateLimited = errors.New("httpapi: rate limited")
)

// requestError is an error the HTTP layer raises itself: a kind from the
// sentinels above (which picks the table row) and a message meant for the
// client, shown as is.
type requestError struct {
	kind error
	msg  string
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.kind }

// invalid returns a 400 invalid_argument error whose message names field
// and says why, e.g. invalid("quantity", "required") says "quantity:
// required", in the "field: reason" wording of order.FieldError.
func invalid(field, format string, args ...any) error {
	return &requestError{kind: errInvalidArgument, msg: field + ": " + fmt.Sprintf(format, args...)}
}

// invalidBody returns a 400 invalid_argument error about the body as a whole.
func invalidBody(format string, args ...any) error {
	return &requestError{kind: errInvalidArgument, msg: fmt.Sprintf(format, args...)}
}

// errorKind is how one error code looks on the wire: its HTTP status, and,
// when hide is set, the message the client gets instead of the error's
// own (which may name hosts and ports; the log has it in full).
type errorKind struct {
	status  int
	code    string
	hide    bool
	message string
}

// ownErrors names the errors the HTTP layer raises itself. Every other
// error is named by order.Outcome, the one table from the domain's
// sentinels to their names, which metrics and logs use too.
// Their messages are written for the client and shown as they are.
var ownErrors = []struct {
	err  error
	code string
}{
	{errInvalidArgument, "invalid_argument"},
	{errUnauthorized, "unauthorized"},
	{errForbidden, "forbidden"},
	{errRouteNotFound, "not_found"},
	{errMethod, "method_not_allowed"},
	{errNotReady, "unavailable"},
	{errBusy, "busy"},
	{errRateLimited, "rate_limited"},
}

// errorTable is the one place that decides how an error code looks on the
// wire. A code not listed is a 500.
var errorTable = map[string]errorKind{
	"invalid_argument":   {status: http.StatusBadRequest},
	"unauthorized":       {status: http.StatusUnauthorized},
	"forbidden":          {status: http.StatusForbidden},
	"not_found":          {status: http.StatusNotFound},
	"method_not_allowed": {status: http.StatusMethodNotAllowed},
	"already_exists":     {status: http.StatusConflict},
	"sold_out":           {status: http.StatusConflict},
	"duplicate_order":    {status: http.StatusConflict},
	"duplicate_request":  {status: http.StatusConflict},
	"expired":            {status: http.StatusConflict},
	"already_paid":       {status: http.StatusConflict},
	"cancelled":          {status: http.StatusConflict},
	"rate_limited":       {status: http.StatusTooManyRequests},
	"busy": {status: http.StatusServiceUnavailable, hide: true,
		message: "shop busy: too many orders waiting; nothing was written; retry"},
	"lock_timeout": {status: http.StatusServiceUnavailable, hide: true,
		message: "timed out waiting for the product lock; nothing was written; retry"},
	"lock_lost": {status: http.StatusServiceUnavailable, hide: true,
		message: "the product lock was lost before the order was written; nothing was written; retry"},
	"version_conflict": {status: http.StatusServiceUnavailable, hide: true,
		message: "other buyers' orders changed the product on every try; nothing was written; retry"},
	"fenced_out": {status: http.StatusServiceUnavailable, hide: true,
		message: "a newer holder of the product lock came first; nothing was written; retry"},
	"in_doubt": {status: http.StatusServiceUnavailable, hide: true,
		message: "the order was sent to the database and its answer was lost: it may exist; " +
			"retry, and a duplicate_order answer names it"},
	"unavailable": {status: http.StatusServiceUnavailable, hide: true,
		message: "a backend (database, Redis or etcd) is unavailable; nothing was written; retry"},
	// The client hung up (or the server is being forced down) before the
	// work finished; nothing was written. Nobody may be listening any
	// more, but the access log should not call it an internal error.
	"canceled": {status: http.StatusServiceUnavailable, hide: true,
		message: "the request was cancelled or ran out of time before it finished; nothing was written; retry"},
}

// internalError is what the client sees for an error the table does not know.
var internalError = errorKind{
	status: http.StatusInternalServerError, code: "internal", hide: true,
	message: "internal error; the server log has the details (look up the X-Request-ID)",
}

// retryAfterSeconds is sent with every 503 and 429 that says no sooner
// (see retryAfter): the conditions behind them (a contended lock, a full
// door, a node restarting, a buyer's burst) usually clear within a second.
const retryAfterSeconds = "1"

// retryAfter is the Retry-After of err's answer: its own, if it has one
// (the door's busyError, the guard's rateLimitedError), else
// retryAfterSeconds.
func retryAfter(err error) string {
	var own interface{ RetryAfter() string }
	if errors.As(err, &own) {
		return own.RetryAfter()
	}
	return retryAfterSeconds
}

// errorBody is the JSON shape of every error: {"error":{"code","message"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// OrderID names the buyer's order with duplicate_order.
	OrderID string `json:"order_id,omitempty"`
}

// kindOf finds err's row in the table, or internalError.
func kindOf(err error) errorKind {
	code, own := order.Outcome(err), false
	for _, row := range ownErrors {
		if errors.Is(err, row.err) {
			code, own = row.code, true
			break
		}
	}
	k, ok := errorTable[code]
	if !ok {
		return internalError
	}
	k.code = code
	k.hide = k.hide && !own
	return k
}

// writeError writes err as a JSON error response and aborts the chain. It is
// the only way a handler reports failure. Like every response it is written
// with PureJSON, which keeps <, > and & as they are (plain JSON would write
// \u003c), so messages read well in curl. The error is also attached to the
// gin context so that the access log shows it next to the request id.
func writeError(c *gin.Context, err error) {
	k := kindOf(err)
	msg := err.Error()
	if k.hide {
		msg = k.message
	}
	if k.status == http.StatusServiceUnavailable || k.status == http.StatusTooManyRequests {
		c.Header("Retry-After", retryAfter(err))
	}
	detail := errorDetail{Code: k.code, Message: msg}
	if dup, ok := errors.AsType[*order.DuplicateOrderError](err); ok {
		detail.OrderID = dup.OrderID
	}
	_ = c.Error(err)
	c.AbortWithStatusPureJSON(k.status, errorBody{Error: detail})
}

// logLevelFor says how loud the access log should be about a status.
func logLevelFor(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return slog.LevelWarn
	default:
		return slog.LevelInfo
	}
}
