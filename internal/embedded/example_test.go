package embedded_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/migrations"
)

// Start the embedded backends the way `go run ./cmd/shop` does with no flags.
func Example() {
	ctx := context.Background()

	nodes, err := embedded.StartRedis(5)
	if err != nil {
		panic(err)
	}
	defer nodes.Close()

	db, err := embedded.OpenSQLite(ctx)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := migrations.Apply(ctx, db.DB); err != nil {
		panic(err)
	}

	c := redis.NewClient(&redis.Options{Addr: nodes.Addrs()[0]})
	defer c.Close()
	fmt.Println(len(nodes.Addrs()), c.Ping(ctx).Val())
	// Output: 5 PONG
}
