package order

import (
	"context"
	"errors"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// Errors returned by Service. Compare them with errors.Is; the returned
// errors wrap them with details and, where there is one, the cause (a
// dlock, stock or context error). Outcome names each of them.
var (
	// ErrInvalid means the request failed validation; the error is a
	// *FieldError that names the field. Nothing was sent to Redis or the
	// database.
	ErrInvalid = errors.New("order: invalid request")
	// ErrLockTimeout means the product lock could not be taken within the
	// lock wait (or before the caller's context ended; then the error also
	// wraps ctx.Err()). Nothing was written.
	ErrLockTimeout = errors.New("order: timed out waiting for the product lock")
	// ErrLockLost means the watchdog found the product lock lost before
	// the order was written, and cancelled the work. Nothing was written;
	// the buyer may retry.
	ErrLockLost = errors.New("order: product lock lost")
	// ErrFencedOut means the database refused the product lock's fencing
	// token: a newer holder had registered one (strategies fenced, etcd).
	// Nothing was written; the buyer may retry.
	ErrFencedOut = errors.New("order: fencing token refused")
	// ErrVersionConflict means every try of a sql-version order found,
	// when it came to write, that another buyer's write had changed the
	// product since it read it (version.go): the crowd on the product
	// outran it. Nothing was written; the buyer may retry.
	ErrVersionConflict = errors.New("order: outrun by other buyers' writes on every try")
)

// The errors every strategy may return: package stock's, the words of
// every keeper of the stock, and package orderdb's, about the order's row.
// See there for when each comes back.
var (
	ErrSoldOut          = stock.ErrSoldOut            // too few units left
	ErrBusy             = stock.ErrBusy               // not served in time, nothing sent; retry
	ErrUnavailable      = stock.ErrUnavailable        // a backend could not be reached; nothing written
	ErrUnknownOrder     = stock.ErrUnknownOrder       // no order has the id; wraps stock.ErrNotFound
	ErrDuplicateOrder   = orderdb.ErrDuplicateOrder   // the buyer has an order: a *DuplicateOrderError
	ErrDuplicateRequest = orderdb.ErrDuplicateRequest // the buyer's other click is in flight
	ErrInDoubt          = orderdb.ErrInDoubt          // the COMMIT's answer was lost: the order may exist
)

// DuplicateOrderError is the error for a buyer who already has an order
// for the product, naming it (package orderdb's). It wraps ErrDuplicateOrder.
type DuplicateOrderError = orderdb.DuplicateOrderError

// Outcome names how an order ended, from Place's error: "created" for nil,
// else the code of the first row of vocabulary the error wraps, and
// "error" for anything else. The names are the codes of the HTTP API's
// errors, the label values of the metrics and the outcome in the logs:
// one name each, fixed and few, as a metric's label values must be.
func Outcome(err error) string {
	if err == nil {
		return "created"
	}
	for _, v := range vocabulary {
		if errors.Is(err, v.err) {
			return v.code
		}
	}
	return "error"
}

// vocabulary is the one table from a sentinel to its name. The HTTP API
// (package httpapi) maps each name to a status; order matters where one
// error could wrap two sentinels.
var vocabulary = []struct {
	err  error
	code string
}{
	{ErrInvalid, "invalid_argument"},
	{stock.ErrInvalid, "invalid_argument"},
	{stock.ErrNotFound, "not_found"},
	{stock.ErrAlreadyExists, "already_exists"},
	{ErrSoldOut, "sold_out"},
	{ErrDuplicateOrder, "duplicate_order"},
	{ErrDuplicateRequest, "duplicate_request"},
	{ErrLockTimeout, "lock_timeout"},
	{ErrBusy, "busy"},
	{ErrVersionConflict, "version_conflict"},
	{ErrExpired, "expired"},
	{ErrAlreadyPaid, "already_paid"},
	{ErrCancelled, "cancelled"},
	{ErrFencedOut, "fenced_out"},
	{ErrLockLost, "lock_lost"},
	{ErrInDoubt, "in_doubt"},
	{ErrUnavailable, "unavailable"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "canceled"},
}
