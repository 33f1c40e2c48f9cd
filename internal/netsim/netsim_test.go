package netsim_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/netsim"
)

func parse(t *testing.T, s string) netsim.RTT {
	t.Helper()
	r, err := netsim.ParseRTT(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every command of a client that dials through the network waits at least
// the link's RTT; a link without one is not proxied.
func TestNetworkDelaysEveryRedisCommand(t *testing.T) {
	const rtt = 20 * time.Millisecond
	mr := miniredis.RunT(t)
	n := netsim.New(parse(t, "redis=20ms"))
	t.Cleanup(n.Close)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr(), Dialer: n.Dialer(netsim.Redis)})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil { // the connection is made outside the timing
		t.Fatal(err)
	}

	const commands = 5
	start := time.Now()
	for i := range commands {
		if err := c.Incr(ctx, "k").Err(); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	if took, want := time.Since(start), commands*rtt; took < want {
		t.Errorf("%d commands at rtt %v took %v, want at least %v", commands, rtt, took, want)
	}

	if got, err := n.Addr(netsim.Etcd, "127.0.0.1:2379"); err != nil || got != "127.0.0.1:2379" {
		t.Errorf("Addr on a link without an RTT: got %q, %v; want the upstream", got, err)
	}
	a1, _ := n.Addr(netsim.Redis, mr.Addr())
	a2, _ := n.Addr(netsim.Redis, mr.Addr())
	if a1 != a2 || a1 == mr.Addr() {
		t.Errorf("Addr twice for one upstream: got %q and %q, want one proxy's address, not %q", a1, a2, mr.Addr())
	}
	n.Close()
	if _, err := n.Addr(netsim.Redis, "127.0.0.1:1"); !errors.Is(err, netsim.ErrClosed) {
		t.Errorf("Addr after Close: got %v, want ErrClosed", err)
	}
}

func TestNilNetworkDelaysNothing(t *testing.T) {
	var n *netsim.Network
	mr := miniredis.RunT(t)
	if got, err := n.Addr(netsim.Redis, mr.Addr()); err != nil || got != mr.Addr() {
		t.Errorf("nil Addr: got %q, %v; want %q", got, err, mr.Addr())
	}
	c := redis.NewClient(&redis.Options{Addr: mr.Addr(), Dialer: n.Dialer(netsim.Redis)})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Errorf("a client through a nil network's dialer: %v", err)
	}
	n.Close()
}

// The SQLite connector waits one RTT per round trip a MySQL client makes:
// a transaction of BEGIN, two statements and COMMIT waits four.
func TestConnectorDelaysEachRoundTrip(t *testing.T) {
	const rtt = 20 * time.Millisecond
	n := netsim.New(parse(t, "db=20ms"))
	ctx := context.Background()
	db, err := database.OpenSQLite(ctx, filepath.Join(t.TempDir(), "db.sqlite"), database.WithConnector(n.Connector))
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { sqlDB.Close() })
	if _, err := sqlDB.ExecContext(ctx, "CREATE TABLE t (n INTEGER)"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var got int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&got); err != nil || got != 1 {
		t.Fatalf("count: got %d, %v; want 1", got, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if took, want := time.Since(start), 4*rtt; took < want {
		t.Errorf("BEGIN, two statements and COMMIT at rtt %v took %v, want at least %v", rtt, took, want)
	}

	if c := (*netsim.Network)(nil).Connector(nil); c != nil {
		t.Errorf("a nil network's Connector: got %v, want the connector it was given", c)
	}
}
