package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/netsim"
)

// The child side of a process fleet (procs.go): a program that
// StartFleet re-executes as a shop finds childShopEnv set and, instead of
// doing what it normally does, serves one shop on the fleet's backends
// until it is told to stop (SIGTERM), it is killed (SIGKILL: the --crash
// fault), or its parent goes away.
//
// Everything the child needs travels in that one environment variable, as
// JSON: the database (the parent's SQLite file, or the MySQL DSN), the
// Redis nodes, the Sentinel-managed master and the etcd members (the
// parent's embedded servers on loopback, or the real ones it was given),
// the admin token and the lock wait. The environment, not the command
// line: a DSN's password and the token stay out of ps. The child listens
// on its address only once its shop is built, as a shop process does: until
// then a buyer's connection is refused. (The parent keeps the port from
// being handed to anyone else meanwhile: package porthold.)
//
// The parent applied the schema before starting any child: the child opens
// the database and does not migrate it.

// childShopEnv names the environment variable that makes a process a
// fleet's child shop.
const childShopEnv = "FLASHSALE_LOADGEN_SHOP"

// childConfig is what a child shop is told, as JSON in childShopEnv.
type childConfig struct {
	// Shop numbers the shop from 1, for its log lines.
	Shop int `json:"shop"`
	// Addr is where it serves, host:port.
	Addr string `json:"addr"`
	// SQLitePath or MySQLDSN: the database.
	SQLitePath string   `json:"sqlite_path,omitempty"`
	MySQLDSN   string   `json:"mysql_dsn,omitempty"`
	RedisAddrs []string `json:"redis_addrs"`
	// Sentinels and Master: a Sentinel-managed master, if any.
	Sentinels []string `json:"sentinels,omitempty"`
	Master    string   `json:"master,omitempty"`
	// Cluster: a Redis Cluster's nodes, if any.
	Cluster       []string `json:"cluster,omitempty"`
	EtcdEndpoints []string `json:"etcd_endpoints,omitempty"`
	ZooKeeper     []string `json:"zookeeper,omitempty"`
	AdminToken    string   `json:"admin_token"`
	LockWaitMs    int64    `json:"lock_wait_ms"`
	// MaxInFlight, BuyerRate, BuyerBurst and BuyerSecret: app.Config's.
	MaxInFlight int     `json:"max_in_flight,omitempty"`
	BuyerRate   float64 `json:"buyer_rate,omitempty"`
	BuyerBurst  int     `json:"buyer_burst,omitempty"`
	BuyerSecret string  `json:"buyer_secret,omitempty"`
	// RTT: the parent's simulated network, as netsim.ParseRTT reads it;
	// the child puts its own proxies on its links.
	RTT string `json:"rtt,omitempty"`
}

// IsChildShop reports whether this process was started by a process fleet
// (FleetConfig.Processes) as one of its shops. A program that may be
// started that way must check it first thing in main and, if so, call
// ServeChildShop instead of doing anything else (ServeIfChildShop does
// both).
func IsChildShop() bool { return os.Getenv(childShopEnv) != "" }

// ServeIfChildShop serves this process's shop and exits, if this process
// is a process fleet's child shop (IsChildShop); SIGINT and SIGTERM stop it
// gracefully. Otherwise it returns at once. A program that may be started
// that way calls it first thing in main, and so must the TestMain of a test
// binary that starts a process fleet.
func ServeIfChildShop() {
	if !IsChildShop() {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ServeChildShop(ctx, os.Stderr)
	stop()
	os.Exit(code)
}

// ServeChildShop serves this process's shop, as childShopEnv describes it,
// until ctx ends (the parent's SIGTERM), then shuts down gracefully. It
// also exits, at once, when its standard input reaches EOF: the parent
// holds the other end of that pipe, and the kernel closes it when the
// parent dies, however it dies. Logs (warnings and above) go to stderr,
// which the parent keeps. It returns the exit code: 0 after a graceful
// shutdown, 1 if the shop could not start or failed, 2 for a bad
// description.
func ServeChildShop(ctx context.Context, stderr io.Writer) int {
	var c childConfig
	if err := json.Unmarshal([]byte(os.Getenv(childShopEnv)), &c); err != nil {
		fmt.Fprintf(stderr, "child shop: %s: %v\n", childShopEnv, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("shop", c.Shop, "pid", os.Getpid())
	go exitWithParent(os.Stdin)
	if err := c.serve(ctx, log); err != nil {
		log.Error("child shop stopped", "err", err)
		return 1
	}
	return 0
}

// exitWithParent exits the process once r, the pipe from the parent,
// reaches EOF (or fails): the parent is gone, and a shop nobody sends to
// would only hold its port and its database connections.
func exitWithParent(r io.Reader) {
	_, _ = io.Copy(io.Discard, r)
	os.Exit(1)
}

// serve opens the backends, builds the shop, listens and serves it until
// ctx ends.
func (c childConfig) serve(ctx context.Context, log *slog.Logger) error {
	b, err := c.backends(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	cfg := app.Config{
		MySQLDSN: c.MySQLDSN, RedisAddrs: c.RedisAddrs, EtcdEndpoints: c.EtcdEndpoints, ZooKeeper: c.ZooKeeper,
		RedisMaster: app.SentinelMaster{Sentinels: c.Sentinels, Name: c.Master}, RedisCluster: c.Cluster,
		AdminToken: c.AdminToken, LockWait: time.Duration(c.LockWaitMs) * time.Millisecond, Logger: log,
		MaxInFlightOrders: c.MaxInFlight, BuyerRate: c.BuyerRate, BuyerBurst: c.BuyerBurst, BuyerSecret: c.BuyerSecret,
	}
	shop, err := app.NewShop(ctx, cfg, b)
	if err != nil {
		return err
	}
	defer shop.Close()
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("child shop: listen on %s: %w", c.Addr, err)
	}
	return shop.Serve(ctx, ln)
}

// backends opens the database the parent named, through the network it
// named, and records its servers, as app.Backends built by hand (NewShop
// reads DB, RedisAddrs, RedisMaster, RedisCluster, EtcdEndpoints and Net).
// Its Close closes the database and the network only.
func (c childConfig) backends(ctx context.Context) (*app.Backends, error) {
	rtt, err := netsim.ParseRTT(c.RTT)
	if err != nil {
		return nil, fmt.Errorf("child shop: %w", err)
	}
	b := &app.Backends{
		RedisAddrs: c.RedisAddrs, EtcdEndpoints: c.EtcdEndpoints, ZooKeeper: c.ZooKeeper,
		RedisMaster: app.SentinelMaster{Sentinels: c.Sentinels, Name: c.Master}, RedisCluster: c.Cluster,
	}
	if !rtt.IsZero() {
		b.Net = netsim.New(rtt)
	}
	switch {
	case c.SQLitePath != "":
		b.DB, err = database.OpenSQLite(ctx, c.SQLitePath, app.SQLiteLink(b.Net))
	case c.MySQLDSN != "":
		b.DB, err = database.OpenMySQL(ctx, c.MySQLDSN, app.MySQLLink(b.Net))
	default:
		err = errors.New("child shop: no database named")
	}
	if err != nil {
		b.Net.Close()
		return nil, err
	}
	return b, nil
}
