package stock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
	"github.com/flashsale/flashsale/migrations"
)

// A product carries the settings of its sale: the strategy, the lock TTL,
// and the simulated latency inside the critical section. Here a product
// whose critical section stalls past a naive lock's TTL one time in ten.
func ExampleStore_Create() {
	ctx := context.Background()
	db, err := embedded.OpenSQLite(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := migrations.Apply(ctx, db.DB); err != nil {
		log.Fatal(err)
	}
	products := stock.NewStore(db.DB)

	p, err := products.Create(ctx, stock.Product{
		ID: "sneaker-42", Name: "Sneaker", Stock: 100, Strategy: strategy.Naive,
		LockTTL: 100 * time.Millisecond, Work: 5 * time.Millisecond,
		Stall: 300 * time.Millisecond, StallRate: 0.1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d of %d, %s, ttl %v\n", p.ID, p.Stock, p.InitialStock, p.Strategy, p.LockTTL)

	_, err = products.Create(ctx, stock.Product{ID: "sneaker-42", Stock: 1, Strategy: strategy.Lua})
	fmt.Println(errors.Is(err, stock.ErrAlreadyExists))

	_, err = products.Create(ctx, stock.Product{ID: "bad id", Stock: 1, Strategy: strategy.Lua})
	fmt.Println(err)

	_, err = products.Get(ctx, "nope")
	fmt.Println(errors.Is(err, stock.ErrNotFound))
	// Output:
	// sneaker-42: 100 of 100, naive, ttl 100ms
	// true
	// stock: invalid: id must be 1..64 characters of [A-Za-z0-9._:-], got "bad id"
	// true
}
