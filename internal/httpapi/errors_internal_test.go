package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/flashsale/flashsale/internal/order"
)

// TestTransientDBErrorsStatus: a caller's deadline is not an internal error.
// (A deadlock or a lock wait timeout reaches the table as
// order.ErrUnavailable: package order maps them.)
func TestTransientDBErrorsStatus(t *testing.T) {
	err := fmt.Errorf("order: %w", context.DeadlineExceeded)
	if k := kindOf(err); k.status != http.StatusServiceUnavailable {
		t.Errorf("%v -> %d %s, want 503", err, k.status, k.code)
	}
}

// TestLockLostMessageHidden: lock_lost is a 503 whose message does not carry
// the wrapped Redis or database error (addresses, key names) to the
// client.
func TestLockLostMessageHidden(t *testing.T) {
	err := fmt.Errorf("%w: in the critical section: %w", order.ErrLockLost,
		fmt.Errorf("dlock: lock not held: \"flashsale:lock:product:p\": refresh: dial tcp 10.0.0.7:6379: connect: connection refused"))
	if k := kindOf(err); !k.hide {
		t.Errorf("lock_lost is sent verbatim: %q", err.Error())
	}
}

// TestBusyFromTheShop: an order withdrawn unsent from its shop's queue
// (order.ErrBusy) is a 503 busy, as at the door, with the table's message
// and not the queue's (it names the product), and the door's own busy keeps
// its message.
func TestBusyFromTheShop(t *testing.T) {
	err := fmt.Errorf("%w: %w", order.ErrBusy, fmt.Errorf("queue: no round trip to redis took the accept within its wait: \"p\", 1s"))
	if k := kindOf(err); k.status != http.StatusServiceUnavailable || k.code != "busy" || !k.hide {
		t.Errorf("%v -> %d %s (hidden %v), want 503 busy, hidden", err, k.status, k.code, k.hide)
	}
	door := &requestError{kind: errBusy, msg: "shop busy"}
	if k := kindOf(door); k.code != "busy" || k.hide {
		t.Errorf("the door's busy -> %s (hidden %v), want busy, shown", k.code, k.hide)
	}
}

// TestVersionConflict: a sql-version order outrun on every try
// (order.ErrVersionConflict) is a retryable 503 version_conflict, with the
// table's message rather than one naming the product.
func TestVersionConflict(t *testing.T) {
	err := fmt.Errorf("%w: \"p\", 5 tries", order.ErrVersionConflict)
	if k := kindOf(err); k.status != http.StatusServiceUnavailable || k.code != "version_conflict" || !k.hide {
		t.Errorf("%v -> %d %s (hidden %v), want 503 version_conflict, hidden", err, k.status, k.code, k.hide)
	}
}
