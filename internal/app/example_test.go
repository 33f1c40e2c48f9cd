package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/flashsale/flashsale/internal/app"
)

// Example starts the embedded backends and two shop instances on them, as
// cmd/loadgen does with three, creates a product through one shop and buys
// it through the other.
func Example() {
	ctx := context.Background()
	cfg := app.Config{AdminToken: "s3cret", Logger: slog.New(slog.DiscardHandler)}
	backends, err := app.OpenBackends(ctx, cfg) // no DSN, no Redis addresses: embedded
	if err != nil {
		fmt.Println(err)
		return
	}
	defer backends.Close()

	var urls []string
	for range 2 {
		shop, err := app.NewShop(ctx, cfg, backends) // its own Redis clients and lockers
		if err != nil {
			fmt.Println(err)
			return
		}
		defer shop.Close()
		srv := httptest.NewServer(shop.Handler()) // or shop.Serve(ctx, listener)
		defer srv.Close()
		urls = append(urls, srv.URL)
	}

	post := func(url, body, token string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println(post(urls[0]+"/api/v1/products", `{"id":"phone","stock":1,"lock_mode":"redlock"}`, "s3cret"))
	fmt.Println(post(urls[1]+"/api/v1/orders", `{"user_id":"alice","product_id":"phone","quantity":1}`, ""))
	fmt.Println(post(urls[0]+"/api/v1/orders", `{"user_id":"bob","product_id":"phone","quantity":1}`, ""))
	// Output:
	// 201
	// 201
	// 409
}
