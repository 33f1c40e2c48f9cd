package orderdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/stock"
)

// The one-round-trip sale (strategy sql-one-trip): the conditional UPDATE,
// the INSERT and the COMMIT are one stored procedure, sent as one CALL; with
// interpolateParams (database.OpenMySQL's default) one request and one
// answer, so the row's lock is held for the server's time only.

// callOneTrip is the one statement a one-trip sale sends. Its arguments:
// the order's id, buyer, product, quantity, strategy and time, and how
// long to hold the COMMIT back (the late-commit fault; 0 in a sale).
const callOneTrip = "CALL place_one_trip(?, ?, ?, ?, ?, ?, ?)"

// errVoid is a call that arrived after a shop had settled its order as
// never written (AfterCallFailure): the server refused it. Only a shop
// that had already lost the call's answer could be told so.
var errVoid = errors.New("order: the call arrived after its order was settled as not written")

// CallOneTrip sells o in one call, holding its COMMIT back for hold on the
// server, the product's row lock held (the late-commit fault; 0 for
// none). left is the product's stock after the call, when the server said
// (placed or sold out); -1 if it did not. It is safe for concurrent use,
// on MySQL and MariaDB only.
//
// Errors: ErrNoUnits (too few units: nothing written); ErrDuplicateKey
// (the buyer has an order: nothing written); a deadlock or lock wait
// timeout after every try (stock.IsConflict: rolled back each time);
// otherwise the call's error, which AfterCallFailure reads.
func (w *Writer) CallOneTrip(ctx context.Context, o Order, hold time.Duration) (left int, err error) {
	var outcome string
	var stockLeft *int
	err = againOnConflict(ctx, func() error {
		return w.db.WithContext(ctx).
			Raw(callOneTrip, o.ID, o.UserID, o.ProductID, o.Quantity, string(o.Strategy), o.CreatedAt, hold.Milliseconds()).
			Row().Scan(&outcome, &stockLeft)
	})
	left = -1
	if stockLeft != nil {
		left = *stockLeft
	}
	switch {
	case err != nil:
		return left, err
	case outcome == "placed":
		return left, nil
	case outcome == "sold_out":
		return left, ErrNoUnits
	case outcome == "duplicate":
		return left, ErrDuplicateKey
	case outcome == "void":
		return left, errVoid
	}
	return left, fmt.Errorf("order: place_one_trip answered %q", outcome)
}

// AfterCallFailure is AfterFailure for a failed CallOneTrip of o. A call the
// server answered with an error, or never sent (driver.ErrBadConn), wrote
// nothing: err as it is. Any other error (a lost connection included) may
// have come after its COMMIT, or the call may still be on its way, holding
// no row lock yet: settleCall voids o's id on the product's row, which the
// call takes first, to make "not there" final.
func (w *Writer) AfterCallFailure(ctx context.Context, o Order, err error) error {
	var answered *mysql.MySQLError
	if (errors.As(err, &answered) && !stock.IsConnError(err)) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, errVoid) {
		return err
	}
	return w.afterSent(ctx, o, &commitError{err: err}, w.settleCall)
}

// settleCall reports whether o landed; when it has not, it writes o's id
// to table reclaimed, so that a call still on its way is refused (void)
// when it arrives. Both take the product's row first, so one of them
// comes second and sees the other's work. It waits as Settled does.
func (w *Writer) settleCall(ctx context.Context, o Order) (found bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.settleWait())
	defer cancel()
	err = w.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := TakeRow(tx, o.ProductID); err != nil {
			return err
		}
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM orders WHERE id = ?", o.ID).Row().Scan(&n); err != nil {
			return err
		}
		if found = n > 0; found {
			return nil
		}
		return tx.Exec("INSERT INTO reclaimed (id, product_id, reclaimed_at) VALUES (?, ?, ?)",
			o.ID, o.ProductID, time.Now().UTC().Truncate(time.Microsecond)).Error
	})
	return found, err
}
