package redisstock_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// TestGiveBackAtMaxmemory: a Redis at its maxmemory with the default
// policy, noeviction, refuses a script whose first write is a command that
// may grow memory (a SET), and lets one through that only frees it first.
// A held reservation must still be given back then; the unit would
// otherwise stay reserved for a buyer who has no order, and that buyer be
// refused as a duplicate. (A script that wrote the given-back mark first,
// before it read the buyer, would be refused whole.)
func TestGiveBackAtMaxmemory(t *testing.T) {
	c := privateRedis(t)
	ctx := context.Background()
	s := redisstock.New(c)
	if err := s.Load(ctx, "p", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, "p", "alice", "r1", 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil { // far below what it uses
		t.Fatal(err)
	}
	held, err := s.GiveBack(ctx, "p", "alice", "r1", 1)
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err != nil || !held {
		t.Fatalf("GiveBack of a held reservation at maxmemory: %v, %v; want true, nil", held, err)
	}
	checkLeft(t, s, "p", 3)
	if _, err := s.Take(ctx, "p", "alice", "r2", 1, time.Hour); err != nil {
		t.Errorf("alice clicks again: %v", err)
	}
}

// privateRedis starts a redis-server of this test's own, on a unix socket
// in a temporary folder, for a test that changes the server's settings
// (the shared test servers are used by other packages' tests at the same
// time), and stops it at cleanup. Without redis-server on PATH it skips;
// in a run against real servers (FLASHSALE_TEST_REDIS_ADDRS set, as in
// CI) it fails instead.
func privateRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(testenv.EnvRedisAddrs) != "" {
			t.Fatalf("redis-server is not on PATH, and %s says real servers are here: %v", testenv.EnvRedisAddrs, err)
		}
		t.Skip("needs redis-server on PATH (Debian: apt-get install redis-server); miniredis has no maxmemory")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for c.Ping(ctx).Err() != nil {
		if ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server did not answer on %s within 10 s; its log:\n%s", sock, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c
}
