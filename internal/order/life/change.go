package life

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/stock"
)

// columns are what Get, End and Due read of an order.
const columns = "id, user_id, product_id, quantity, bucket, state, deadline_ms"

// Get reads order id through q (the database, or a transaction).
// Errors: stock.ErrUnknownOrder, or the database's.
func Get(ctx context.Context, q *gorm.DB, id string) (Order, error) {
	return get(q.WithContext(ctx), id, "")
}

// get reads order id through q, with suffix after the query (" FOR
// UPDATE", or nothing).
func get(q *gorm.DB, id, suffix string) (Order, error) {
	var o Order
	var ms *int64
	var state string
	err := q.Raw("SELECT "+columns+" FROM orders WHERE id = ?"+suffix, id).Row().
		Scan(&o.ID, &o.UserID, &o.ProductID, &o.Quantity, &o.Bucket, &state, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, fmt.Errorf("%w: %q", stock.ErrUnknownOrder, id)
	}
	o.State, o.Deadline = State(state), deadline(ms)
	return o, err
}

// Pay pays order id, if it is pending and its deadline has not passed by
// the database's clock: one compare-and-set, and no stock moves. A payment
// sent twice gets the same answer twice. It returns the order as it stands
// and whether this call paid it. Errors: ErrExpired (the sweep gives the
// units back, once); ErrCancelled; stock.ErrUnknownOrder; or the
// database's. Safe for concurrent use.
func Pay(ctx context.Context, db *gorm.DB, id string) (o Order, paid bool, err error) {
	stmt := fmt.Sprintf(`UPDATE orders SET state = 'paid'
		WHERE id = ? AND state = 'pending' AND deadline_ms > %s`, NowMs(db))
	res := db.WithContext(ctx).Exec(stmt, id)
	if res.Error != nil {
		return Order{}, false, res.Error
	}
	if o, err = Get(ctx, db, id); err != nil {
		return Order{}, false, err
	}
	switch o.State {
	case Paid:
		return o, res.RowsAffected > 0, nil
	case Cancelled:
		return o, false, fmt.Errorf("%w: order %s", ErrCancelled, id)
	}
	return o, false, fmt.Errorf("%w: order %s, deadline %s", ErrExpired, id, o.Deadline.Format("15:04:05.000"))
}

// End ends order id in tx, if it is pending: to Expired only once its
// deadline has passed by the database's clock; to Cancelled before it, and
// to Expired after it (a buyer refused a payment as expired is never told
// cancelled). It frees the buyer's unique key (unique_buyer NULL). It
// reports whether this call ended it: then, and only then, the caller
// gives its units back in tx, and commits both or neither. The row is read
// for update first, so of two racing Ends, in any shops, one ends it and
// the other finds it ended.
//
// ended is false with a nil error for an order already in state to (or
// cancelled, when expiring) or not due yet. Errors: ErrAlreadyPaid,
// ErrExpired (cancelling an expired order), stock.ErrUnknownOrder, or the
// database's.
func End(tx *gorm.DB, id string, to State) (o Order, ended bool, err error) {
	suffix := ""
	if tx.Dialector.Name() != "sqlite" {
		suffix = " FOR UPDATE"
	}
	if o, err = get(tx, id, suffix); err != nil {
		return Order{}, false, err
	}
	switch {
	case o.State == to, to == Expired && o.State == Cancelled:
		return o, false, nil
	case o.State == Paid:
		return o, false, fmt.Errorf("%w: order %s", ErrAlreadyPaid, id)
	case o.State == Expired:
		return o, false, fmt.Errorf("%w: order %s", ErrExpired, id)
	}
	now := NowMs(tx)
	set, cond := "'expired'", " AND deadline_ms <= "+now // not due yet: nothing
	if to == Cancelled {
		set, cond = "CASE WHEN deadline_ms <= "+now+" THEN 'expired' ELSE 'cancelled' END", ""
	}
	res := tx.Exec("UPDATE orders SET state = "+set+", unique_buyer = NULL WHERE id = ? AND state = 'pending'"+cond, id)
	if res.Error != nil || res.RowsAffected == 0 {
		return o, false, res.Error
	}
	if to == Cancelled {
		o, err = get(tx, id, "") // cancelled, or expired if its deadline had passed
		return o, err == nil, err
	}
	o.State = to
	return o, true, nil
}

// Due returns up to limit pending orders whose deadline has passed by the
// database's clock, the earliest first, but for those of the products
// skip: the sweep's work.
func Due(ctx context.Context, db *gorm.DB, limit int, skip ...string) ([]Order, error) {
	not, args := "", []any{}
	if len(skip) > 0 {
		not = " AND product_id NOT IN ?"
		args = append(args, skip)
	}
	q := fmt.Sprintf(`SELECT %s FROM orders WHERE state = 'pending' AND deadline_ms <= %s%s
		ORDER BY deadline_ms LIMIT ?`, columns, NowMs(db), not)
	rows, err := db.WithContext(ctx).Raw(q, append(args, limit)...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var due []Order
	for rows.Next() {
		var o Order
		var ms *int64
		var state string
		if err := rows.Scan(&o.ID, &o.UserID, &o.ProductID, &o.Quantity, &o.Bucket, &state, &ms); err != nil {
			return nil, err
		}
		o.State, o.Deadline = State(state), deadline(ms)
		due = append(due, o)
	}
	return due, rows.Err()
}
