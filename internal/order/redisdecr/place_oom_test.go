package redisdecr

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/stock"
)

// A Redis at its maxmemory (noeviction) refuses take.lua at its first
// write (HSET): a definite "nothing reserved" (redisstock.ErrFull), so the
// order gives nothing back. Were it taken for "the script may have run",
// the give-back's mark (a SET) would be refused too, and each refused
// click would start a settle loop that takes the product's row some 25
// times over two minutes, for a reservation that was never made.
func TestTakeAtMaxmemoryGivesNothingBack(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("needs redis-server")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	for c.Ping(ctx).Err() != nil {
		time.Sleep(20 * time.Millisecond)
	}
	b := testenv.NewEnv(t, testenv.EnvModes(t)[len(testenv.EnvModes(t))-1])
	db := b.DB.DB()
	var settleGaveUp, logged atomic.Int64
	var mu sync.Mutex
	var sample string
	h := &countHandler{fn: func(r slog.Record) {
		logged.Add(1)
		if strings.HasPrefix(r.Message, "settle a reservation") {
			settleGaveUp.Add(1)
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "err" {
					mu.Lock()
					sample = a.Value.String()
					mu.Unlock()
				}
				return true
			})
		}
	}}
	s := newShop(t, b, db, Options{Stock: redisstock.New(c), Logger: slog.New(h)})
	p := addProduct(ctx, t, b, db, "oom", stock.Product{Stock: 10})
	if err := redisstock.New(c).Load(ctx, p.ID, 10); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	const clicks = 20
	for i := range clicks {
		err := s.place(ctx, p, "u"+string(rune('a'+i)))
		if i == 0 {
			t.Logf("a click at maxmemory: %v", err)
		}
	}
	left, _ := c.Get(ctx, "flashsale:stock:{"+p.ID+"}").Int()
	t.Logf("Redis stock after %d refused clicks: %d (nothing was reserved)", clicks, left)
	start := time.Now()
	s.Close()
	t.Logf("Close took %v; settle loops that gave up: %d; sample err: %s", time.Since(start).Round(time.Millisecond), settleGaveUp.Load(), sample)
	c.ConfigSet(ctx, "maxmemory", "0")
	if n := settleGaveUp.Load(); n > 0 {
		t.Errorf("%d settle loops ran for takes Redis refused outright (OOM): nothing was reserved", n)
	}
}

type countHandler struct{ fn func(slog.Record) }

func (h *countHandler) Enabled(context.Context, slog.Level) bool      { return true }
func (h *countHandler) Handle(_ context.Context, r slog.Record) error { h.fn(r); return nil }
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h *countHandler) WithGroup(string) slog.Handler                 { return h }
