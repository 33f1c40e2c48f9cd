// Package buckets is strategy sql-atomic over K stock buckets
// (stock.Product.Buckets >= 2): a hot product's stock split over K rows
// of stock_buckets, so that K buyers can take a unit at once, each
// holding one row's lock, where one row would queue them all behind its
// lock. Package order's Service sells its bucketed products through a
// Seller; a product without buckets never comes here.
//
// A buyer goes first to the bucket a hash of their id names (Home), and
// to the others in turn (home+1, home+2, ... mod K) when it is empty.
// Each try is one transaction, the same as sql-atomic's without buckets
// (orderdb.InsertAndTake): the buyer's order row with its unique key, then
// the one conditional UPDATE, on that bucket's row.
//
// Why it is exact:
//   - No oversell: every unit is taken by the conditional UPDATE on its
//     bucket, which checks and writes under the row's lock.
//   - One order per buyer across all buckets, the fallback included: the
//     claim is the buyer's order row, not the bucket. orders_unique_buyer
//     allows one row per (product, buyer) whatever the bucket, and a try
//     whose bucket was empty rolls back, its row with it, before the next
//     try inserts it again. Two tries of one buyer (a repeated click)
//     meet on the unique key, not on a bucket.
//   - Never "sold out" while a bucket holds a unit: the answer comes only
//     after every bucket was found with fewer units than asked for, by a
//     conditional UPDATE that read its latest committed value (in this
//     request, or an earlier one of this process: see known). Without a
//     pay window a bucket only goes down (a try that rolls back never
//     took), so a bucket found empty stays empty, and when the last one
//     is found empty they all are. With one, an order that ends unpaid
//     gives its units back to its bucket, and nothing is remembered.
//
// Quantities are taken from one bucket: a buyer asking for 2 when two
// buckets hold 1 each is told sold out.
package buckets

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// Seller sells bucketed products. It is safe for concurrent use; one
// Seller stands for one shop process, and any number of them may share a
// database.
type Seller struct {
	w       *orderdb.Writer
	soldOut func(product string)
	held    func(p stock.Product, h *orderdb.RowHold)
	known   sync.Map // product id -> *known
}

// New returns a Seller that writes with w. soldOut, if not nil, hears of
// a product every one of whose buckets was found empty (package order
// then answers its buyers at once); held, if not nil, hears of each
// try's hold of its bucket's row once its transaction ended. Both must
// be safe for concurrent use.
func New(w *orderdb.Writer, soldOut func(product string), held func(p stock.Product, h *orderdb.RowHold)) *Seller {
	if soldOut == nil {
		soldOut = func(string) {}
	}
	if held == nil {
		held = func(stock.Product, *orderdb.RowHold) {}
	}
	return &Seller{w: w, soldOut: soldOut, held: held}
}

// Home is the bucket of k that buyer user tries first: FNV-1a of the id,
// modulo k. It spreads buyers evenly, and a buyer's repeated clicks go
// to the same bucket first.
func Home(user string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(user))
	return int(h.Sum32() % uint32(k))
}

// Place writes o, an order of p (p.Buckets >= 2), taking its units from
// the buyer's home bucket, or from the next that holds enough.
//
// Errors, and then nothing was written: stock.ErrSoldOut when no bucket
// holds o.Quantity; a *orderdb.DuplicateOrderError when the buyer has an
// order for p; otherwise what orderdb.FromWrite makes of the database's
// error (stock.ErrUnavailable, orderdb.ErrInDoubt, ctx's error).
func (s *Seller) Place(ctx context.Context, p stock.Product, o orderdb.Order) error {
	k := p.Buckets
	kn := s.knownOf(p.ID, k)
	home := Home(o.UserID, k)
	for i := range k {
		b := (home + i) % k
		if p.PayWithin == 0 && kn.short(b, o.Quantity) {
			continue // found with fewer units before, and it never grows
		}
		row := s.w.RowHold()
		err := s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
			row.Began()
			if err := orderdb.InsertAndTake(tx, o, b); err != nil {
				return err
			}
			row.Took() // the bucket's UPDATE, the last statement, answered
			return nil
		})
		s.held(p, row)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, orderdb.ErrNoUnits):
			if p.PayWithin == 0 { // else an unpaid order may give units back
				kn.mark(b, o.Quantity)
			}
			// and fall back to the next bucket
		case errors.Is(err, orderdb.ErrDuplicateKey):
			return s.w.Duplicate(ctx, p.ID, o.UserID)
		default:
			o.Bucket = &b // the row a COMMIT still landing holds (Settled)
			if err := s.w.AfterFailure(ctx, o, err); err != nil {
				return orderdb.FromWrite(ctx, err)
			}
			return nil
		}
	}
	if kn.empty() {
		s.soldOut(p.ID)
	}
	return fmt.Errorf("%w: %q has no bucket with %d left", stock.ErrSoldOut, p.ID, o.Quantity)
}

// knownOf returns what this Seller knows of product's k buckets.
func (s *Seller) knownOf(product string, k int) *known {
	if kn, ok := s.known.Load(product); ok {
		return kn.(*known)
	}
	kn, _ := s.known.LoadOrStore(product, &known{below: make([]int, k)})
	return kn.(*known)
}
