package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
)

// Two layers of one request each take the product lock under the request's
// id: the inner one nests instead of waiting for the outer one, another
// request is kept out, and the key goes with the last release.
func ExampleNewReentrant() {
	nodes, stop := exampleRedis(1)
	defer stop()
	ctx := context.Background()
	locks := dlock.NewReentrant(nodes[0])
	defer locks.Close()
	const key = "flashsale:lock:product:p1"
	held := func() bool { return nodes[0].Exists(ctx, key).Val() == 1 }

	req := locks.As("request-42")
	outer, err := req.Lock(ctx, key, time.Second, time.Second) // the order service
	if err != nil {
		fmt.Println(err)
		return
	}
	inner, err := req.Lock(ctx, key, time.Second, time.Second) // the stock service it calls
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("nested; token:", inner.Token())
	fmt.Println("holds:", nodes[0].HGet(ctx, key, "request-42").Val())

	_, err = locks.As("request-43").TryLock(ctx, key, time.Second)
	fmt.Println("another request kept out:", errors.Is(err, dlock.ErrNotObtained))

	fmt.Println("release inner:", inner.Release(ctx), "- still locked:", held())
	fmt.Println("release outer:", outer.Release(ctx), "- still locked:", held())
	// Output:
	// nested; token: request-42
	// holds: 2
	// another request kept out: true
	// release inner: <nil> - still locked: true
	// release outer: <nil> - still locked: false
}
