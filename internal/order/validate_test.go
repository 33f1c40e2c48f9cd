package order_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestPlaceRejectsInvalid: bad input fails with a *FieldError wrapping
// ErrInvalid, naming the field in it and in the message, and never reaches
// Redis or the database. The Service here has neither: any use of them
// would panic.
func TestPlaceRejectsInvalid(t *testing.T) {
	shop := order.NewService(nil, nil, nil, order.Options{})
	cases := []struct {
		name  string
		req   order.Request
		field string
	}{
		{"empty user", order.Request{UserID: "", ProductID: "p", Quantity: 1}, "user_id"},
		{"user too long", order.Request{UserID: strings.Repeat("u", 65), ProductID: "p", Quantity: 1}, "user_id"},
		{"user with space", order.Request{UserID: "a b", ProductID: "p", Quantity: 1}, "user_id"},
		{"user with newline", order.Request{UserID: "a\n", ProductID: "p", Quantity: 1}, "user_id"},
		{"user with braces", order.Request{UserID: "{u}", ProductID: "p", Quantity: 1}, "user_id"},
		{"empty product", order.Request{UserID: "u", ProductID: "", Quantity: 1}, "product_id"},
		{"product too long", order.Request{UserID: "u", ProductID: strings.Repeat("p", 65), Quantity: 1}, "product_id"},
		{"product with star", order.Request{UserID: "u", ProductID: "p*", Quantity: 1}, "product_id"},
		{"zero quantity", order.Request{UserID: "u", ProductID: "p", Quantity: 0}, "quantity"},
		{"negative quantity", order.Request{UserID: "u", ProductID: "p", Quantity: -1}, "quantity"},
		{"quantity over max", order.Request{UserID: "u", ProductID: "p", Quantity: order.MaxQuantity + 1}, "quantity"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := shop.Place(context.Background(), c.req)
			if !errors.Is(err, order.ErrInvalid) {
				t.Fatalf("got err %v, want %v", err, order.ErrInvalid)
			}
			var fe *order.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got err %T, want a *order.FieldError", err)
			}
			if fe.Field != c.field {
				t.Errorf("Field: got %q, want %q", fe.Field, c.field)
			}
			if !strings.HasPrefix(err.Error(), c.field+": ") {
				t.Errorf("message: got %q, want it to start with %q", err, c.field+": ")
			}
			if err2 := c.req.Validate(); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Validate: got %v, want the error Place returned, %v", err2, err)
			}
		})
	}
	if err := (order.Request{UserID: "u", ProductID: "p", Quantity: order.MaxQuantity}).Validate(); err != nil {
		t.Errorf("Validate of a valid request: got %v, want nil", err)
	}
	_, err := shop.Audit(context.Background(), "bad id")
	if !errors.Is(err, order.ErrInvalid) {
		t.Errorf("Audit with a malformed id: got err %v, want %v", err, order.ErrInvalid)
	}
	if want := "product_id: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Audit with a malformed id: got message %q, want it to start with %q", err, want)
	}
}

// TestPlace covers the single-buyer answers: an order with its fields,
// quantities above one, sold out (also without Redis once it was seen), a
// second order, an unknown product.
func TestPlace(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := newShops(t, b, 1, order.Options{})[0]
		p := newProduct(t, b, "place", stock.Product{Strategy: strategy.Lua, Stock: 5, LockTTL: time.Second})

		before := time.Now().Add(-time.Second)
		o, err := shop.Place(ctx, order.Request{UserID: "alice", ProductID: p.ID, Quantity: 3})
		if err != nil {
			t.Fatalf("Place: %v", err)
		}
		if o.ID == "" || o.UserID != "alice" || o.ProductID != p.ID || o.Quantity != 3 || o.Strategy != strategy.Lua {
			t.Errorf("order: got %+v, want alice's 3 of %s in mode lua with an id", o, p.ID)
		}
		if o.CreatedAt.Before(before) || o.CreatedAt.After(time.Now()) {
			t.Errorf("CreatedAt: got %v, want about now", o.CreatedAt)
		}

		_, err = shop.Place(ctx, order.Request{UserID: "bob", ProductID: p.ID, Quantity: 3})
		if !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("3 more of 2 left: got err %v, want %v", err, order.ErrSoldOut)
		}
		_, err = shop.Place(ctx, order.Request{UserID: "alice", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, order.ErrDuplicateOrder) {
			t.Errorf("alice again: got err %v, want %v", err, order.ErrDuplicateOrder)
		}
		if _, err = shop.Place(ctx, order.Request{UserID: "bob", ProductID: p.ID, Quantity: 2}); err != nil {
			t.Errorf("the last 2: %v", err)
		}
		_, err = shop.Place(ctx, order.Request{UserID: "carol", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("after the last unit: got err %v, want %v", err, order.ErrSoldOut)
		}
		// Once sold out is seen, the answer needs neither Redis nor a lock.
		b.Redis.Stop(0)
		_, err = shop.Place(ctx, order.Request{UserID: "dave", ProductID: p.ID, Quantity: 1})
		b.Redis.Start(0)
		if !errors.Is(err, order.ErrSoldOut) {
			t.Errorf("sold out, Redis down: got err %v, want %v", err, order.ErrSoldOut)
		}

		// An unknown product is not remembered as unknown: once another
		// process creates it, it sells.
		late := b.Redis.Key("late")
		_, err = shop.Place(ctx, order.Request{UserID: "alice", ProductID: late, Quantity: 1})
		if !errors.Is(err, stock.ErrNotFound) {
			t.Errorf("unknown product: got err %v, want %v", err, stock.ErrNotFound)
		}
		if _, err := stock.NewStore(b.DB.DB()).Create(ctx, stock.Product{ID: late, Stock: 1, Strategy: strategy.Lua}); err != nil {
			t.Fatal(err)
		}
		if _, err := shop.Place(ctx, order.Request{UserID: "alice", ProductID: late, Quantity: 1}); err != nil {
			t.Errorf("product created after a miss: %v", err)
		}

		want := order.Audit{ProductID: p.ID, Strategy: strategy.Lua, InitialStock: 5, Stock: 0,
			Orders: 2, Sold: 5, Consistent: true}
		if got := audit(t, shop, p.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("audit\n got %+v\nwant %+v", got, want)
		}
	})
}
