package redisstock

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The ledger lets anyone find the reservations nobody will finish (their
// shop died): Take writes each to it, due after a hold by Redis's clock,
// GiveBack removes it, and a sweep asks Due for those past their hold,
// forgets the sold ones (Forget) and gives the rest back. The hot path pays
// nothing extra: it is written inside the take and give-back scripts.

// Reservation is one buyer's reservation of a product's units, as the
// ledger keeps it.
type Reservation struct {
	Product, Buyer string
	// ID is the reservation's id: its order's.
	ID       string
	Quantity int
}

// member is r in the ledger: "<id>|<quantity>|<buyer>". The buyer comes
// last, so that parse needs no rule about what a buyer's id may hold.
func (r Reservation) member() string {
	return r.ID + "|" + strconv.Itoa(r.Quantity) + "|" + r.Buyer
}

// parseMember is member's inverse, for product.
func parseMember(product, m string) (Reservation, error) {
	parts := strings.SplitN(m, "|", 3)
	if len(parts) != 3 {
		return Reservation{}, fmt.Errorf("redisstock: ledger of %q: malformed entry %q", product, m)
	}
	q, err := strconv.Atoi(parts[1])
	if err != nil {
		return Reservation{}, fmt.Errorf("redisstock: ledger of %q: malformed entry %q", product, m)
	}
	return Reservation{Product: product, Buyer: parts[2], ID: parts[0], Quantity: q}, nil
}

// Due returns up to limit of product's reservations whose hold has
// passed by Redis's clock, oldest first, and how many reservations the
// ledger holds in all, due or not (0: there is nothing left to settle).
// It changes nothing; any number of callers may ask at once. Errors:
// stock.ErrUnavailable or ctx's, or a malformed entry.
func (s *Stock) Due(ctx context.Context, product string, limit int) ([]Reservation, int, error) {
	res, err := dueScript.Run(ctx, s.c, []string{ledgerKey(product)}, limit).Slice()
	if err != nil {
		return nil, 0, redisErr(ctx, err, "read the ledger", product)
	}
	if len(res) == 0 {
		return nil, 0, fmt.Errorf("redisstock: ledger of %q: unexpected reply %v", product, res)
	}
	n, _ := res[0].(int64)
	due := make([]Reservation, 0, len(res)-1)
	for _, v := range res[1:] {
		m, _ := v.(string)
		r, err := parseMember(product, m)
		if err != nil {
			return nil, int(n), err
		}
		due = append(due, r)
	}
	return due, int(n), nil
}

// Forget removes sold reservations from product's ledger: their orders
// are in the database, so they are settled, and the buyers keep their
// entries (a sold buyer is a duplicate for good). Forgetting one that is
// not there does nothing. Errors: stock.ErrUnavailable or ctx's.
func (s *Stock) Forget(ctx context.Context, product string, sold []Reservation) error {
	if len(sold) == 0 {
		return nil
	}
	members := make([]any, len(sold))
	for i, r := range sold {
		members[i] = r.member()
	}
	return redisErr(ctx, s.c.ZRem(ctx, ledgerKey(product), members...).Err(), "prune the ledger", product)
}
