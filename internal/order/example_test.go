package order_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/migrations"
)

// A shop process wires a Service from a database, the products in it and a
// locker per mode, then places orders and reads the audit. Here on the
// embedded backends; real MySQL and Redis are wired the same way.
func ExampleService_Place() {
	ctx := context.Background()

	// Backends: five Redis nodes and a SQLite file with the schema.
	nodes, err := embedded.StartRedis(5)
	if err != nil {
		log.Fatal(err)
	}
	defer nodes.Close()
	db, err := embedded.OpenSQLite(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := migrations.Apply(ctx, db.DB); err != nil {
		log.Fatal(err)
	}

	// One locker per mode, on this process's own Redis clients.
	var clients []*redis.Client
	for _, addr := range nodes.Addrs() {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		clients = append(clients, c)
	}
	lockers := make(map[dlock.Mode]dlock.Locker)
	for _, mode := range dlock.Modes() {
		l, err := dlock.New(mode, clients)
		if err != nil {
			log.Fatal(err)
		}
		defer l.Close()
		lockers[mode] = l
	}

	products := stock.NewStore(db.DB)
	shop := order.NewService(db.DB, products, lockers, order.Options{LockWait: 2 * time.Second})

	// Two phones, guarded by the lua lock.
	_, err = shop.AddProduct(ctx, stock.Product{ID: "phone", Name: "Phone", Stock: 2,
		Strategy: strategy.Lua, LockTTL: time.Second})
	if err != nil {
		log.Fatal(err)
	}

	for _, user := range []string{"alice", "bob", "alice", "carol"} {
		o, err := shop.Place(ctx, order.Request{UserID: user, ProductID: "phone", Quantity: 1})
		switch {
		case err == nil:
			fmt.Printf("%s: bought %d\n", o.UserID, o.Quantity)
		case errors.Is(err, order.ErrDuplicateOrder):
			fmt.Printf("%s: already bought one\n", user)
		case errors.Is(err, order.ErrSoldOut):
			fmt.Printf("%s: sold out\n", user)
		default:
			fmt.Printf("%s: %v\n", user, err)
		}
	}

	a, err := shop.Audit(ctx, "phone")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("audit: %d orders, %d of %d sold, %d left, oversold %d, consistent %v\n",
		a.Orders, a.Sold, a.InitialStock, a.Stock, a.Oversold, a.Consistent)
	// Output:
	// alice: bought 1
	// bob: bought 1
	// alice: already bought one
	// carol: sold out
	// audit: 2 orders, 2 of 2 sold, 0 left, oversold 0, consistent true
}
