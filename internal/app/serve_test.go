package app_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestServeGracefulShutdown cancels Serve's context while an order sits in
// its critical section: the order still completes with 201, its locks are
// released, Serve returns nil, and the listener stops accepting.
func TestServeGracefulShutdown(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, env *testenv.Env) {
		shop := newShop(t, env, app.Config{ShutdownTimeout: 10 * time.Second})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + ln.Addr().String()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		served := make(chan error, 1)
		go func() { served <- shop.Serve(ctx, ln) }()

		client := &http.Client{Timeout: 30 * time.Second}
		pid := env.Redis.Key("slow")
		status, body, err := call(t.Context(), client, "POST", base+"/api/v1/products",
			fmt.Sprintf(`{"id":%q,"stock":5,"lock_mode":"lua","work_ms":800}`, pid), testToken)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("create product: %d %v %v", status, body, err)
		}

		type result struct {
			status int
			body   map[string]any
			err    error
		}
		ordered := make(chan result, 1)
		go func() {
			status, body, err := call(t.Context(), client, "POST", base+"/api/v1/orders",
				fmt.Sprintf(`{"user_id":"u1","product_id":%q,"quantity":1}`, pid), "")
			ordered <- result{status, body, err}
		}()

		// Wait until the order holds its product lock, then shut down.
		lockKey := "flashsale:lock:{" + pid + "}"
		deadline := time.Now().Add(5 * time.Second)
		for len(env.Redis.Keys(0, lockKey)) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the order never took its product lock")
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()

		r := <-ordered
		if r.err != nil || r.status != http.StatusCreated {
			t.Fatalf("in-flight order: %d %v %v, want 201", r.status, r.body, r.err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve = %v, want nil after a graceful shutdown", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after its context ended")
		}
		if keys := env.Redis.Keys(0, "flashsale:*"+pid+"*"); len(keys) != 0 {
			t.Errorf("locks left after shutdown: %v", keys)
		}
		if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
			t.Error("listener still accepts after Serve returned")
		}
	})
}

// TestServeForcedShutdown lets an order outlast the shutdown timeout: Serve
// closes its connection, which cancels the order's context, so the order
// stops before it writes, releases its locks, and Serve reports the
// timeout.
func TestServeForcedShutdown(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	shop := newShop(t, env, app.Config{ShutdownTimeout: 200 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- shop.Serve(ctx, ln) }()

	client := &http.Client{Timeout: 30 * time.Second}
	pid := env.Redis.Key("stuck")
	status, body, err := call(t.Context(), client, "POST", base+"/api/v1/products",
		fmt.Sprintf(`{"id":%q,"stock":5,"lock_mode":"lua","work_ms":10000}`, pid), testToken)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create product: %d %v %v", status, body, err)
	}
	ordered := make(chan error, 1)
	go func() {
		_, _, err := call(t.Context(), client, "POST", base+"/api/v1/orders",
			fmt.Sprintf(`{"user_id":"u1","product_id":%q,"quantity":1}`, pid), "")
		ordered <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(env.Redis.Keys(0, "flashsale:lock:{"+pid+"}")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the order never took its product lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()

	select {
	case err := <-served:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve = %v, want an error wrapping context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if err := <-ordered; err == nil {
		t.Error("the cut-off order got a response, want a closed connection")
	}
	if keys := env.Redis.Keys(0, "flashsale:*"+pid+"*"); len(keys) != 0 {
		t.Errorf("locks left after a forced shutdown: %v", keys)
	}
	var orders int64
	if err := env.DB.DB().Table("orders").Where("product_id = ?", pid).Count(&orders).Error; err != nil {
		t.Fatal(err)
	}
	if orders != 0 {
		t.Errorf("orders = %d, want 0: a cut-off order must not write", orders)
	}
}

// TestServeReturnsListenerError checks that Serve reports a dead listener
// instead of pretending to serve.
func TestServeReturnsListenerError(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	shop := newShop(t, env, app.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := shop.Serve(t.Context(), ln); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("Serve on a closed listener = %v, want an error", err)
	}
}
