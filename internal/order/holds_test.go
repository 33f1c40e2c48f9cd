package order_test

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/etcdlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// TestHoldsAreTheRoundTripsCounted checks strategy's table of holds
// against the round trips one uncontended order makes (holds_trips_test.go
// logs them), on each backend. The rules it counts by:
//
//   - a lock (not off's, which holds nothing) is held from its grant to its
//     release: every trip sent after the grant came, the release's too,
//     per link (on Redis, the most on any one node: redlock's nodes are
//     asked at once);
//   - a strategy without one holds its hot row from the statement that
//     takes it (takes, below) to the COMMIT: the trips after that one,
//     the COMMIT's too. SQLite takes no row: sql-for-update's DB is then
//     not checked, and its Tx is what it holds;
//     (a command sent again on a new connection is not counted: resent);
//   - Tx is the trips of the sale's transaction after its BEGIN, to the
//     COMMIT;
//   - a Free strategy takes no lock, and its order makes no trip between a
//     BEGIN and a COMMIT other than its one write's.
//
// Each case places one order first, so that connections, the product's
// cache and the database's flavour are known, then counts the second.
func TestHoldsAreTheRoundTripsCounted(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		b.WithEtcd(t)
		log := &tripLog{}
		shop := countedShop(t, b, log)
		for _, tc := range []struct {
			name    string
			p       stock.Product
			takes   string // the statement that takes the hot row, where no lock is held
			lockRow bool   // held from the lock's grant to its release
		}{
			{"off", stock.Product{Strategy: strategy.Off}, "UPDATE products SET stock = ? WHERE", false},
			{"naive", stock.Product{Strategy: strategy.Naive}, "", true},
			{"lua", stock.Product{Strategy: strategy.Lua}, "", true},
			{"redlock", stock.Product{Strategy: strategy.Redlock}, "", true},
			{"fenced", stock.Product{Strategy: strategy.Fenced}, "", true},
			{"fenced batched", stock.Product{Strategy: strategy.Fenced, BatchMax: 8}, "", true},
			{"etcd", stock.Product{Strategy: strategy.Etcd}, "", true},
			{"sql-for-update", stock.Product{Strategy: strategy.SQLForUpdate}, "FOR UPDATE", false},
			{"sql-version", stock.Product{Strategy: strategy.SQLVersion}, "SELECT stock, version FROM", false},
			{"sql-atomic", stock.Product{Strategy: strategy.SQLAtomic}, "UPDATE products SET stock = stock -", false},
			{"sql-atomic in buckets", stock.Product{Strategy: strategy.SQLAtomic, Buckets: 4},
				"UPDATE stock_buckets SET stock = stock -", false},
			{"redis-decr", stock.Product{Strategy: strategy.RedisDecr}, "", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want, ok := tc.p.Strategy.Holds()
				if !ok {
					t.Fatalf("%s has no Hold in strategy's table", tc.p.Strategy)
				}
				tc.p.Stock, tc.p.LockTTL = 10, 10*time.Second // no renewal within the order
				p := newProduct(t, b, strings.ReplaceAll(tc.name, " ", "-"), tc.p)
				ctx := context.Background()
				start := log.len()
				mustPlace(ctx, t, shop, p.ID, "first")
				waitHoldsEnded(t, log, start) // a batch lets its lock go after it answers
				from := log.len()
				mustPlace(ctx, t, shop, p.ID, "second")
				waitHoldsEnded(t, log, from)
				trips := log.since(from)
				defer func() {
					if t.Failed() {
						for _, tr := range trips {
							t.Logf("  %s#%d %s", tr.link, tr.node, tr.what)
						}
					}
				}()
				got := countHold(trips, tc.lockRow, tc.takes)
				if want.Free != "" {
					if got.locked || got.tx < 0 {
						t.Errorf("a Free hold: took a lock %v, wrote in a transaction %v; want no lock, one write", got.locked, got.tx >= 0)
					}
					return
				}
				// Tx is what a sale holds SQLite's one write lock for; on
				// MySQL the rows are locked one by one and DB is the hold
				// (sql-for-update's transaction is shorter there: no
				// no-op UPDATE to take a lock).
				if b.DB.Mode() != testenv.Real && got.tx != want.Tx {
					t.Errorf("Tx: counted %d trips after BEGIN to COMMIT, the table says %d", got.tx, want.Tx)
				}
				if got.db < 0 {
					t.Logf("no statement takes the row on %s: DB (%d) not checked here", b.Mode, want.DB)
					return
				}
				for _, c := range []struct {
					link      string
					got, want int
				}{{"db", got.db, want.DB}, {"redis", got.redis, want.Redis}, {"etcd", got.etcd, want.Etcd}} {
					if c.got != c.want {
						t.Errorf("%s: counted %d trips held, the table says %d", c.link, c.got, c.want)
					}
				}
			})
		}
	})
}

// counted is what countHold counted in one order's trips: per link, the
// trips held (-1 for db where nothing took the row), the transaction's
// trips (-1 without a COMMIT), and whether a lock was granted.
type counted struct {
	db, redis, etcd, tx int
	locked              bool
}

// countHold counts trips by TestHoldsAreTheRoundTripsCounted's rules.
func countHold(trips []trip, lockRow bool, takes string) counted {
	c := counted{db: -1, tx: -1}
	sent := map[int][]string{} // per Redis node, the commands counted
	in, begun := false, -1
	for i, tr := range trips {
		switch {
		case tr.link == "lock" && tr.what == "acquired":
			c.locked = true
			if lockRow {
				in, c.db = true, 0
			}
			continue
		case tr.link == "lock" && tr.what == "held":
			in = false
			continue
		case tr.link == "db" && tr.what == "BEGIN" && begun < 0:
			begun = i
		case tr.link == "db" && tr.what == "COMMIT" && begun >= 0 && c.tx < 0:
			c.tx = dbTripsIn(trips[begun+1 : i+1])
		}
		if !lockRow && takes != "" && c.db < 0 && tr.link == "db" && strings.Contains(tr.what, takes) {
			c.db = dbTripsIn(trips[i+1 : commitAfter(trips, i)+1])
		}
		if !in {
			continue
		}
		switch tr.link {
		case "db":
			c.db++
		case "redis":
			// Not the dedupe lock's: a redlock dedupe lock's late sends
			// to its slower nodes may be logged inside the product's hold;
			// nor the product lock's own acquire (SET NX) reaching a slower
			// redlock node after a majority granted it: nobody waits for it.
			lateAcquire := strings.HasPrefix(tr.what, "[SET ") && strings.Contains(tr.what, " NX PX ")
			if strings.Contains(tr.what, "flashsale:dedupe:") || lateAcquire || resent(tr, sent) {
				continue
			}
			sent[tr.node] = append(sent[tr.node], tr.what)
			c.redis = max(c.redis, len(sent[tr.node]))
		case "etcd":
			c.etcd++
		}
	}
	return c
}

// resent reports whether tr, a Redis command, is the dial of a new
// connection (HELLO) or a command its node was already sent: redlock's
// acquire returns on a majority and cuts the connections of the nodes
// still answering, and a release on such a node is sent again on a new
// one. The table counts the trips of a connection that was not cut.
func resent(tr trip, sent map[int][]string) bool {
	return strings.HasPrefix(tr.what, "[hello ") || slices.Contains(sent[tr.node], tr.what)
}

// waitHoldsEnded waits until every lock acquired in the trips logged from
// i on was let go ("held" is logged after the release), for up to 5 s.
func waitHoldsEnded(t *testing.T, log *tripLog, i int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		acquired, ended := 0, 0
		for _, tr := range log.since(i) {
			switch {
			case tr.link == "lock" && tr.what == "acquired":
				acquired++
			case tr.link == "lock" && tr.what == "held":
				ended++
			}
		}
		if ended >= acquired {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d locks acquired, %d let go after 5 s", acquired, ended)
		}
		runtime.Gosched()
	}
}

// commitAfter is the index of the first COMMIT after trips[i], or the last.
func commitAfter(trips []trip, i int) int {
	for j := i + 1; j < len(trips); j++ {
		if trips[j].link == "db" && trips[j].what == "COMMIT" {
			return j
		}
	}
	return len(trips) - 1
}

func dbTripsIn(trips []trip) int {
	n := 0
	for _, tr := range trips {
		if tr.link == "db" {
			n++
		}
	}
	return n
}

// countedShop is a shop on b whose round trips, and whose product lock's
// grants and releases, go to log: its own database pool, Redis clients
// and etcd client (shopWith's lockers, counted).
func countedShop(t *testing.T, b *testenv.Env, log *tripLog) *order.Service {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var db *gorm.DB
	var err error
	if b.DB.Mode() == testenv.Real {
		db, err = database.OpenMySQL(ctx, b.DB.DSN(), database.WithConnector(dbTrips(log)))
	} else {
		db, err = database.OpenSQLite(ctx, b.DB.Path(), database.WithConnector(dbTrips(log)))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	clients := b.Redis.Clients()
	for i, c := range clients {
		c.AddHook(redisTrips{log: log, node: i})
	}
	lockers := map[dlock.Mode]dlock.Locker{}
	for _, m := range dlock.Modes() {
		l, err := dlock.NewSingle(m, clients[0])
		if m == dlock.ModeRedlock {
			l, err = dlock.New(m, clients)
		}
		if err != nil {
			t.Fatalf("dlock.New(%s): %v", m, err)
		}
		t.Cleanup(func() { l.Close() })
		lockers[m] = l
	}
	ec, err := clientv3.New(clientv3.Config{Endpoints: b.Etcd.Endpoints(), DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(), DialOptions: []grpc.DialOption{etcdTrips(log)}})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { ec.Close() })
	lockers[etcdlock.Mode] = etcdlock.New(ec)
	shop := order.NewService(db, stock.NewStore(db), lockers, order.Options{
		RedisDecr: redisstock.New(clients[0]), Queue: redisqueue.New(clients[0]),
		Observer: lockEvents{log}, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { shop.Close() })
	return shop
}

// lockEvents logs a product lock's grant and release among the trips.
type lockEvents struct{ log *tripLog }

func (e lockEvents) LockWaited(_ strategy.Name, outcome string, _ time.Duration) {
	if outcome == "acquired" {
		e.log.add("lock", 0, "acquired")
	}
}

func (e lockEvents) Held(strategy.Name, time.Duration) { e.log.add("lock", 0, "held") }

func (lockEvents) Placed(strategy.Name, string, time.Duration) {}
func (lockEvents) Happened(strategy.Name, order.Event)         {}
func (lockEvents) Batched(strategy.Name, int)                  {}
