package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
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

// errorKind is one row of the error table: which sentinel, which HTTP status,
// which machine-readable code. When hide is set the client gets message and
// the full error (which may name hosts and ports) goes to the log only.
type errorKind struct {
	err     error
	status  int
	code    string
	hide    bool
	message string
}

// errorTable is the one place that decides how an error looks on the wire.
// writeError walks it in order with errors.Is, so a wrapped error finds its
// row however deep the sentinel sits. Anything not listed is a 500.
var errorTable = []errorKind{
	{err: errInvalidArgument, status: http.StatusBadRequest, code: "invalid_argument"},
	{err: stock.ErrInvalid, status: http.StatusBadRequest, code: "invalid_argument"},
	{err: order.ErrInvalid, status: http.StatusBadRequest, code: "invalid_argument"},
	{err: errUnauthorized, status: http.StatusUnauthorized, code: "unauthorized"},
	{err: errForbidden, status: http.StatusForbidden, code: "forbidden"},
	{err: stock.ErrNotFound, status: http.StatusNotFound, code: "not_found"},
	{err: errRouteNotFound, status: http.StatusNotFound, code: "not_found"},
	{err: errMethod, status: http.StatusMethodNotAllowed, code: "method_not_allowed"},
	{err: stock.ErrAlreadyExists, status: http.StatusConflict, code: "already_exists"},
	{err: order.ErrSoldOut, status: http.StatusConflict, code: "sold_out"},
	{err: order.ErrDuplicateOrder, status: http.StatusConflict, code: "duplicate_order"},
	{err: order.ErrDuplicateRequest, status: http.StatusConflict, code: "duplicate_request"},
	{err: order.ErrLockTimeout, status: http.StatusServiceUnavailable, code: "lock_timeout",
		hide: true, message: "timed out waiting for the product lock; retry"},
	{err: order.ErrLockLost, status: http.StatusServiceUnavailable, code: "lock_lost",
		hide: true, message: "the product lock was lost before the order was written; nothing was written; retry"},
	{err: order.ErrUnavailable, status: http.StatusServiceUnavailable, code: "unavailable",
		hide: true, message: "a backend (database or Redis) is unavailable; retry"},
	{err: stock.ErrUnavailable, status: http.StatusServiceUnavailable, code: "unavailable",
		hide: true, message: "the database is unavailable; retry"},
	{err: errNotReady, status: http.StatusServiceUnavailable, code: "unavailable"},
	{err: errBusy, status: http.StatusServiceUnavailable, code: "busy"},
	// The client hung up (or the server is being forced down) before the
	// work finished; nothing was written. Nobody may be listening any
	// more, but the access log should not call it an internal error.
	{err: context.Canceled, status: http.StatusServiceUnavailable, code: "unavailable",
		hide: true, message: "the request was cancelled before it finished; retry"},
	{err: context.DeadlineExceeded, status: http.StatusServiceUnavailable, code: "unavailable",
		hide: true, message: "the request ran out of time before it finished; retry"},
}

// internalError is what the client sees for an error the table does not know.
var internalError = errorKind{
	status: http.StatusInternalServerError, code: "internal", hide: true,
	message: "internal error; the server log has the details (look up the X-Request-ID)",
}

// retryAfterSeconds is sent with every 503: the conditions behind it (a
// contended lock, a full door, a node restarting) usually clear within a
// second.
const retryAfterSeconds = "1"

// errorBody is the JSON shape of every error: {"error":{"code","message"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// kindOf finds err's row in the table, or internalError.
func kindOf(err error) errorKind {
	for _, k := range errorTable {
		if errors.Is(err, k.err) {
			return k
		}
	}
	return internalError
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
	if k.status == http.StatusServiceUnavailable {
		c.Header("Retry-After", retryAfterSeconds)
	}
	_ = c.Error(err)
	c.AbortWithStatusPureJSON(k.status, errorBody{Error: errorDetail{Code: k.code, Message: msg}})
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
