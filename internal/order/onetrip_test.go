package order_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// The crowd, repeated clicks, ids that differ in case and the late commit
// run sql-one-trip beside the other rows (oversell_test.go, dedupe_test.go,
// ids_test.go, commit_late_test.go). These are its own.

// TestOneTripSoldOut: the server tells sold out from placed, and says
// what is left: a buyer asking for 2 of 1 left is refused, and the next
// one, asking for 1, buys it; after the last unit the shop knows.
func TestOneTripSoldOut(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "one-trip-sold-out", stock.Product{Strategy: strategy.SQLOneTrip, Stock: 3})
		steps := []struct {
			user     string
			quantity int
			want     error
		}{{"a", 2, nil}, {"b", 2, order.ErrSoldOut}, {"c", 1, nil}, {"d", 1, order.ErrSoldOut}}
		for _, s := range steps {
			_, err := shop.Place(ctx, order.Request{UserID: s.user, ProductID: p.ID, Quantity: s.quantity})
			if !errors.Is(err, s.want) || (s.want == nil && err != nil) {
				t.Errorf("%s asks for %d: got %v, want %v", s.user, s.quantity, err, s.want)
			}
		}
		checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLOneTrip,
			InitialStock: 3, Stock: 0, Orders: 2, Sold: 3, Consistent: true})
	})
}

// TestOneTripAnswerLost: the connection dies after the CALL was sent.
// When the call had landed, the shop finds its order and the buyer is told
// it; a retry is a duplicate naming it. When the call is still on its way
// (it reaches the server 300 ms later), the shop's question takes the
// product's row first and voids the order id: the buyer is told nothing
// was written, the call is refused when it arrives, and the retry buys
// once. On SQLite a sql-one-trip product sells in sql-atomic's
// transaction, whose late COMMIT holds the write lock: the buyer is told
// its order. Nobody has two orders, in any case.
func TestOneTripAnswerLost(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		for _, early := range []time.Duration{0, 300 * time.Millisecond} {
			name := map[bool]string{true: "landed", false: "on its way"}[early == 0]
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				db, fault := b.DB.OpenPool(t)
				shop := shopOn(t, b, db, order.Options{})
				p := newProduct(t, b, "one-trip-lost", stock.Product{Strategy: strategy.SQLOneTrip, Stock: 5})
				mustPlace(ctx, t, shop, p.ID, "warm")

				if early > 0 {
					fault.LoseNextAnswerEarly(early)
				} else {
					fault.LoseNextAnswer(false)
				}
				o, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
				fault.Wait() // the call has reached the server
				o2, retry := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})

				if n := fault.Lost(); n != 1 {
					t.Fatalf("setup: %d answers lost, want 1", n)
				}
				if early > 0 && b.DB.Mode() == testenv.Real {
					if !errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrInDoubt) {
						t.Errorf("x, whose call was voided: got %v, want %v (nothing written)", err, order.ErrUnavailable)
					}
					if retry != nil {
						t.Errorf("x retries: got %v, want an order", retry)
					}
					o = o2
				} else {
					var dup *order.DuplicateOrderError
					if err != nil {
						t.Errorf("x, whose order landed: got %v, want its order", err)
					}
					if !errors.As(retry, &dup) || dup.OrderID != o.ID {
						t.Errorf("x retries: got %v, want a duplicate naming order %q", retry, o.ID)
					}
				}
				checkExact(t, audit(t, shop, p.ID), order.Audit{ProductID: p.ID, Strategy: strategy.SQLOneTrip,
					InitialStock: 5, Stock: 3, Orders: 2, Sold: 2, Consistent: true})
			})
		}
	})
}

// TestOneTripRoundTrips counts the requests the shop sends to MySQL for
// one uncontended order, once the product is known: sql-one-trip sends
// one (the CALL), sql-atomic one per statement (BEGIN, INSERT, UPDATE,
// COMMIT), and holds the row's lock across the last trip.
func TestOneTripRoundTrips(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.DB.Mode() != testenv.Real {
			t.Skip("SQLite has no network: sql-one-trip sells with sql-atomic's transaction there")
		}
		shop := shopOn(t, b, countingPool(t, b.DB.DirectDSN()), order.Options{})
		ctx := context.Background()
		sent := map[strategy.Name]int64{}
		for _, name := range []strategy.Name{strategy.SQLAtomic, strategy.SQLOneTrip} {
			p := newProduct(t, b, "trips-"+string(name), stock.Product{Strategy: name, Stock: 5})
			mustPlace(ctx, t, shop, p.ID, "warm")
			requests.Store(0)
			mustPlace(ctx, t, shop, p.ID, "x")
			sent[name] = requests.Load()
		}
		t.Logf("requests for one order: %v", sent)
		if got := sent[strategy.SQLOneTrip]; got != 1 {
			t.Errorf("sql-one-trip: %d requests for one order, want 1", got)
		}
		if got := sent[strategy.SQLAtomic]; got != 4 {
			t.Errorf("sql-atomic: %d requests for one order, want 4 (BEGIN, INSERT, UPDATE, COMMIT)", got)
		}
	})
}

// requests counts what connections dialed on countingNet sent: each
// request the driver sends to MySQL is one packet, one Write.
var requests atomic.Int64

// countingNet is a go-sql-driver network: tcp, whose connections count
// their writes in requests.
const countingNet = "onetrip-counting"

var registerCounting sync.Once

// countingPool opens a pool of two connections on dsn's database through
// countingNet.
func countingPool(t *testing.T, dsn string) *gorm.DB {
	t.Helper()
	registerCounting.Do(func() {
		mysql.RegisterDialContext(countingNet, func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return countingConn{c}, nil
		})
	})
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Net = countingNet
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := database.OpenMySQL(ctx, cfg.FormatDSN(), database.WithMaxOpenConns(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

// countingConn counts its writes in requests.
type countingConn struct{ net.Conn }

func (c countingConn) Write(b []byte) (int, error) {
	requests.Add(1)
	return c.Conn.Write(b)
}
