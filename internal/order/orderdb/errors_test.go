package orderdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/flashsale/flashsale/internal/stock"
)

// TestFromWrite: what a lock-free write's error means for the buyer. The
// sale's own answers pass as they are; the buyer's ended context comes
// before what the driver said about it; an outage is stock.ErrUnavailable (503,
// retry); anything else stays a plain error (500).
func TestFromWrite(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	dup := &DuplicateOrderError{OrderID: "o1", UserID: "u", ProductID: "p"}
	doubt := fmt.Errorf("%w: commit: reset", ErrInDoubt)
	other := errors.New("syntax error")
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		err     error
		want    []error // errors.Is each
		notWant []error
		same    bool // the error itself comes back
	}{
		{name: "duplicate order", ctx: gone, err: dup, same: true},
		{name: "sold out", ctx: live, err: stock.ErrSoldOut, same: true},
		{name: "in doubt", ctx: gone, err: doubt, same: true},
		{name: "buyer gone", ctx: gone, err: driver.ErrBadConn,
			want: []error{context.Canceled, driver.ErrBadConn}, notWant: []error{stock.ErrUnavailable}},
		{name: "database down", ctx: live, err: driver.ErrBadConn,
			want: []error{stock.ErrUnavailable, driver.ErrBadConn}},
		{name: "anything else", ctx: live, err: other,
			want: []error{other}, notWant: []error{stock.ErrUnavailable, ErrInDoubt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromWrite(tc.ctx, tc.err)
			if tc.same && got != tc.err {
				t.Errorf("FromWrite: %v, want %v as it is", got, tc.err)
			}
			for _, w := range tc.want {
				if !errors.Is(got, w) {
					t.Errorf("FromWrite: %v, want it to wrap %v", got, w)
				}
			}
			for _, w := range tc.notWant {
				if errors.Is(got, w) {
					t.Errorf("FromWrite: %v wraps %v", got, w)
				}
			}
		})
	}
}
