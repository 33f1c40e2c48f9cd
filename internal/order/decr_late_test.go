package order_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestTakeLandingAfterItsGiveBack: redis-decr's take is held up on the
// wire past the client's read timeout. Place gives the reservation back "to
// be sure", on another connection, and finds nothing to give; then the
// held-up take reaches Redis. It must reserve nothing: otherwise a unit is
// lost for good (Redis one below the database) and the buyer, told nothing
// was written, is refused as a duplicate on every retry.
func TestTakeLandingAfterItsGiveBack(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		ctx := context.Background()
		shop := order.NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), nil,
			order.Options{RedisDecr: redisstock.New(shopRedis(t, b.Redis.Addrs()[0])), Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { shop.Close() })
		p := newProduct(t, b, "take-late", stock.Product{Strategy: strategy.RedisDecr, Stock: 3})
		mustPlace(ctx, t, shop, p.ID, "warm")

		// What is sent now waits 1.5 s in the proxy, three read timeouts;
		// 200 ms later new writes pass at once, the give-back's among them.
		b.Redis.SetDelay(0, 1500*time.Millisecond)
		go func() { time.Sleep(200 * time.Millisecond); b.Redis.SetDelay(0, 0) }()
		_, err := shop.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1})
		if !errors.Is(err, order.ErrUnavailable) {
			t.Fatalf("x, its take timed out: got %v, want %v", err, order.ErrUnavailable)
		}
		time.Sleep(2 * time.Second) // the held-up take lands
		shop.Close()                // any settling ends

		a := audit(t, shop, p.ID)
		if a.RedisStock == nil || *a.RedisStock != 2 || a.Drift != 0 || a.Stock != 2 {
			t.Errorf("after the late take: database stock %d, drift %d (audit %+v); want stock 2 in both, drift 0", a.Stock, a.Drift, a)
		}
		retry := order.NewService(b.DB.DB(), stock.NewStore(b.DB.DB()), nil,
			order.Options{RedisDecr: redisstock.New(shopRedis(t, b.Redis.Addrs()[0])), Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { retry.Close() })
		if _, err := retry.Place(ctx, order.Request{UserID: "x", ProductID: p.ID, Quantity: 1}); err != nil {
			t.Errorf("x clicks again: %v, want an order", err)
		}
	})
}

// shopRedis is a client to addr with the timeouts a shop's have
// (internal/app): a reply that takes over 500 ms is given up on.
func shopRedis(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:                     addr,
		DialTimeout:              500 * time.Millisecond,
		DialerRetries:            1,
		ReadTimeout:              500 * time.Millisecond,
		WriteTimeout:             500 * time.Millisecond,
		MaxRetries:               -1,
		ContextTimeoutEnabled:    true,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { c.Close() })
	return c
}
