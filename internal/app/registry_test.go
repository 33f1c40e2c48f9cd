package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// Two shops on one database whose Redis nodes differ, as two shops
// started without --redis have: the second refuses to start, and its error
// names both shops' servers and the flag to give.
func TestRegistryRefusesOtherLockServers(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		first, second := redisNodes(t), redisNodes(t)
		if _, err := shopOn(t, tdb.DB(), first); err != nil {
			t.Fatalf("first shop: %v", err)
		}
		_, err := shopOn(t, secondPool(t, tdb), second)
		var lse *app.LockServersError
		if !errors.As(err, &lse) || !errors.Is(err, app.ErrOtherLockServers) {
			t.Fatalf("second shop on other Redis nodes: got %v, want a *LockServersError", err)
		}
		if !strings.HasPrefix(lse.Ours.Redis, second[0]) || !strings.HasPrefix(lse.Theirs.Redis, first[0]) {
			t.Errorf("error's servers: got ours %q, theirs %q; want ours from %s, theirs from %s", lse.Ours.Redis, lse.Theirs.Redis, second[0], first[0])
		}
		msg := err.Error()
		for _, want := range []string{lse.Ours.String(), lse.Theirs.String(), "same --redis ("} {
			if !strings.Contains(msg, want) {
				t.Errorf("error message lacks %q:\n%s", want, msg)
			}
		}
		if got, want := countShops(t, tdb.DB()), 1; got != want {
			t.Errorf("rows in shops after the refusal: got %d, want %d (the first shop's)", got, want)
		}
	})
}

// Shops on the same servers start side by side, whatever order nodes 1 to
// 4 are given in; node 0 must be the same, since lua locks on it alone.
// Each shop's row goes when it closes.
func TestRegistrySameLockServers(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		nodes := redisNodes(t)
		first, err := shopOn(t, tdb.DB(), nodes)
		if err != nil {
			t.Fatalf("first shop: %v", err)
		}
		reordered := append([]string{nodes[0]}, nodes[1:]...)
		slices.Reverse(reordered[1:])
		if _, err := shopOn(t, secondPool(t, tdb), reordered); err != nil {
			t.Fatalf("second shop on the same nodes, 1 to 4 reversed: %v", err)
		}
		otherNode0 := append([]string{nodes[1], nodes[0]}, nodes[2:]...)
		if _, err := shopOn(t, secondPool(t, tdb), otherNode0); !errors.Is(err, app.ErrOtherLockServers) {
			t.Errorf("third shop with nodes 0 and 1 swapped: got %v, want ErrOtherLockServers", err)
		}
		if got, want := countShops(t, tdb.DB()), 2; got != want {
			t.Errorf("rows in shops with two shops running: got %d, want %d", got, want)
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := countShops(t, tdb.DB()), 1; got != want {
			t.Errorf("rows in shops after one closed: got %d, want %d", got, want)
		}
	})
}

// A row whose heartbeat is long gone, a crashed shop's, does not stop a
// shop on other servers, and is cleared away.
func TestRegistryIgnoresStaleShop(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		err := tdb.DB().Exec("INSERT INTO shops (id, redis_nodes, etcd_endpoints, seen_at) VALUES ('crashed/1/00', 'elsewhere:6379', '', '2000-01-01 00:00:00')").Error
		if err != nil {
			t.Fatal(err)
		}
		if _, err := shopOn(t, tdb.DB(), redisNodes(t)); err != nil {
			t.Fatalf("shop beside a stale row: %v", err)
		}
		if got, want := countShops(t, tdb.DB()), 1; got != want {
			t.Errorf("rows in shops: got %d, want %d (the stale one removed)", got, want)
		}
	})
}

// A running shop renews its row.
func TestRegistryHeartbeat(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		if _, err := shopOn(t, tdb.DB(), redisNodes(t)); err != nil {
			t.Fatal(err)
		}
		first := seenAt(t, tdb.DB())
		deadline := time.Now().Add(10 * time.Second)
		for seenAt(t, tdb.DB()) == first {
			if time.Now().After(deadline) {
				t.Fatalf("seen_at still %s after 10s", first)
			}
			time.Sleep(50 * time.Millisecond) // the heartbeat shows only in the row
		}
	})
}

// Shops with a Sentinel-managed master must name the same one, by the
// same Sentinels in any order; node 0 then serves redlock only, so the
// nodes may come in any order too. No Sentinel answers here: the registry
// compares what the shops were given.
func TestRegistrySentinelMaster(t *testing.T) {
	testenv.DB(t, func(t *testing.T, tdb *testenv.TestDB) {
		nodes := redisNodes(t)
		sentinels := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
		shop := func(nodes, sentinels []string, name string) error {
			t.Helper()
			b := &app.Backends{DB: secondPool(t, tdb), RedisAddrs: nodes, RedisMaster: app.SentinelMaster{Sentinels: sentinels, Name: name}}
			s, err := app.NewShop(t.Context(), app.Config{Logger: quiet}, b)
			if err == nil {
				t.Cleanup(func() { s.Close() })
			}
			return err
		}
		if err := shop(nodes, sentinels, "flashsale"); err != nil {
			t.Fatalf("first shop: %v", err)
		}
		reversed := slices.Clone(nodes)
		slices.Reverse(reversed)
		if err := shop(reversed, []string{sentinels[2], sentinels[0], sentinels[1]}, "flashsale"); err != nil {
			t.Errorf("second shop, nodes and Sentinels in another order: %v", err)
		}
		for _, tt := range []struct {
			name      string
			sentinels []string
			master    string
		}{
			{"no Sentinel", nil, ""},
			{"another master's name", sentinels, "other"},
			{"other Sentinels", sentinels[:2], "flashsale"},
		} {
			err := shop(nodes, tt.sentinels, tt.master)
			if !errors.Is(err, app.ErrOtherLockServers) || !strings.Contains(err.Error(), "--redis-sentinel/--redis-master") {
				t.Errorf("%s: got %v, want ErrOtherLockServers naming --redis-sentinel/--redis-master", tt.name, err)
			}
		}
	})
}

// The message says which flags differ.
func TestLockServersErrorNamesTheFlags(t *testing.T) {
	ours := app.LockServers{Redis: "a:1", Etcd: "e:1"}
	tests := []struct {
		theirs app.LockServers
		want   string
	}{
		{app.LockServers{Redis: "b:1", Etcd: "e:1"}, "the same --redis ("},
		{app.LockServers{Redis: "a:1", Etcd: "f:1"}, "the same --etcd ("},
		{app.LockServers{Redis: "b:1", Etcd: "f:1"}, "the same --redis and --etcd ("},
		{app.LockServers{Redis: "a:1", RedisMaster: "m via s:1", Etcd: "e:1"}, "the same --redis-sentinel/--redis-master ("},
		{app.LockServers{Redis: "b:1", RedisMaster: "m via s:1", Etcd: "f:1"}, "the same --redis, --redis-sentinel/--redis-master and --etcd ("},
		{app.LockServers{Redis: "a:1", RedisMaster: "cluster c:1,c:2", Etcd: "e:1"}, "the same --redis-cluster ("},
		{app.LockServers{Redis: "a:1", Etcd: "e:1", ZooKeeper: "z:1,z:2,z:3"}, "the same --zookeeper ("},
		{app.LockServers{Redis: "a:1", Etcd: "f:1", ZooKeeper: "z:1"}, "the same --etcd and --zookeeper ("},
	}
	for _, tt := range tests {
		err := &app.LockServersError{Ours: ours, Other: "web-2/42/0a0b0c0d", Theirs: tt.theirs}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, "web-2/42/0a0b0c0d") {
			t.Errorf("theirs %v: message lacks %q or the other shop's id:\n%s", tt.theirs, tt.want, msg)
		}
	}
}

// redisNodes starts five embedded Redis servers for the test.
func redisNodes(t *testing.T) []string {
	t.Helper()
	r, err := embedded.StartRedis(app.EmbeddedRedisNodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r.Addrs()
}

// shopOn builds a shop on db that locks on redis, closed at cleanup.
func shopOn(t *testing.T, db *gorm.DB, redis []string) (*app.Shop, error) {
	t.Helper()
	shop, err := app.NewShop(t.Context(), app.Config{Logger: quiet}, &app.Backends{DB: db, RedisAddrs: redis})
	if err == nil {
		t.Cleanup(func() { shop.Close() })
	}
	return shop, err
}

// secondPool opens a pool of its own on tdb's database, as another process
// would: the same SQLite file, or the same MySQL database.
func secondPool(t *testing.T, tdb *testenv.TestDB) *gorm.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var db *gorm.DB
	var err error
	if tdb.Mode() == testenv.Real {
		db, err = database.OpenMySQL(ctx, tdb.DSN(), database.WithMaxOpenConns(4))
	} else {
		db, err = database.OpenSQLite(ctx, tdb.Path())
	}
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { sqlDB.Close() })
	return db
}

func countShops(t *testing.T, db *gorm.DB) int {
	t.Helper()
	var n int
	if err := db.Raw("SELECT COUNT(*) FROM shops").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// seenAt returns the only row's seen_at as the database writes it.
func seenAt(t *testing.T, db *gorm.DB) string {
	t.Helper()
	var s string
	if err := db.Raw("SELECT seen_at FROM shops").Row().Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
