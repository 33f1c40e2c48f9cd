package testenv

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/migrations"
)

// realPoolSize caps each real test database's pool. Test binaries run in
// parallel against one server, whose max_connections is often 151: a full
// 64-connection pool per test would exhaust it. Benchmarks that want the
// production pool open their own with DirectDSN.
const realPoolSize = 32

// DB runs fn as the subtest "embedded", on a SQLite file in t.TempDir(),
// and, when FLASHSALE_TEST_MYSQL_DSN is set, as the subtest "real", on a
// fresh database created for the subtest on that DSN's server and dropped
// when it ends. Both have the migrations applied. A DSN that does not parse,
// or a server that does not answer, fails t.
func DB(t *testing.T, fn func(t *testing.T, db *TestDB)) {
	t.Helper()
	for _, m := range DBModes(t) {
		t.Run(string(m), func(t *testing.T) { fn(t, NewDB(t, m)) })
	}
}

// TestDB is one test's own database with the schema applied. Its methods
// are safe for concurrent use.
type TestDB struct {
	tb        testing.TB
	mode      Mode
	db        *gorm.DB
	path      string       // Embedded: the SQLite file
	down      *atomic.Bool // Embedded: the fault switch
	proxy     *Proxy       // Real: between the pool and the server
	name      string       // Real: the database created for this test
	dsn       string       // Real: through the proxy
	directDSN string       // Real: straight to the server
}

// NewDB gives tb its own migrated database in mode m, removed when tb
// ends. Real needs FLASHSALE_TEST_MYSQL_DSN (tb fails without it); the
// DSN's user must be allowed to CREATE and DROP databases. Use it where DB
// does not fit, for example in benchmarks.
func NewDB(tb testing.TB, m Mode) *TestDB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var d *TestDB
	switch m {
	case Embedded:
		d = newEmbeddedDB(ctx, tb)
	case Real:
		d = newRealDB(ctx, tb)
	default:
		tb.Fatalf("testenv: unknown mode %q", m)
	}
	if err := migrations.Apply(ctx, d.db); err != nil {
		tb.Fatalf("testenv: %s database: %v", m, err)
	}
	return d
}

// Mode returns the mode this database runs in.
func (d *TestDB) Mode() Mode { return d.mode }

// DB returns the database handle, shared by everything in the test (its
// pool is the one Stop cuts). In Real mode its pool holds at most 32
// connections. Do not close it; cleanup does.
func (d *TestDB) DB() *gorm.DB { return d.db }

// DSN returns, in Real mode, a DSN for this test's database that goes
// through the proxy (Stop reaches connections opened with it), for code
// that opens its own connection, such as a shop started from flags. It
// returns "" in Embedded mode, where there is no server to dial: use DB.
func (d *TestDB) DSN() string { return d.dsn }

// DirectDSN is DSN without the proxy, for benchmarks. "" in Embedded mode.
func (d *TestDB) DirectDSN() string { return d.directDSN }

// Path returns the SQLite file in Embedded mode, "" in Real mode.
func (d *TestDB) Path() string { return d.path }

// Stop makes the database unreachable until Start. Real: the proxy cuts
// every connection and refuses new ones. Embedded: the SQLite connections
// are wrapped at the driver level, and while stopped every new connection,
// statement, ping and commit fails with a connection error (an open
// transaction is rolled back), so code sees what it would see from a dead
// server. Data is kept.
func (d *TestDB) Stop() {
	if d.proxy != nil {
		d.proxy.Stop()
		return
	}
	d.down.Store(true)
}

// Start makes the database reachable again after Stop. In Real mode it
// fails the test if the proxy cannot listen on its port again (someone took
// it meanwhile); call it from the test's goroutine.
func (d *TestDB) Start() {
	if d.proxy != nil {
		if err := d.proxy.Start(); err != nil {
			d.tb.Fatalf("testenv: database: %v", err)
		}
		return
	}
	d.down.Store(false)
}

// poolSize caps a pool opened with OpenPool.
const poolSize = 8

// OpenPool opens a second pool on d's database, of at most 8 connections,
// and returns it with its CommitFault, which can make its COMMITs lose
// their answers (see CommitFault). Stop and Start reach the pool as they
// reach DB's. It is closed when tb ends; the caller may close it sooner,
// as a test does that counts what a closed pool leaves behind.
func (d *TestDB) OpenPool(tb testing.TB) (*gorm.DB, *CommitFault) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f := &CommitFault{stop: d.Stop}
	down := d.down
	if down == nil {
		down = new(atomic.Bool) // Real: Stop reaches the pool through the proxy
	}
	wrap := func(c driver.Connector) driver.Connector { return &faultConnector{inner: c, down: down, commit: f} }
	var db *gorm.DB
	var err error
	if d.mode == Real {
		db, err = database.OpenMySQL(ctx, d.dsn, database.WithConnector(wrap), database.WithMaxOpenConns(poolSize))
	} else {
		db, err = database.OpenSQLite(ctx, d.path, database.WithConnector(wrap), database.WithMaxOpenConns(poolSize))
	}
	if err != nil {
		tb.Fatalf("testenv: open a second pool: %v", err)
	}
	tb.Cleanup(func() {
		f.Wait() // a COMMIT still landing (LoseNextAnswerEarly)
		closeGorm(db)
	})
	return db, f
}

func newEmbeddedDB(ctx context.Context, tb testing.TB) *TestDB {
	tb.Helper()
	d := &TestDB{tb: tb, mode: Embedded, path: filepath.Join(tb.TempDir(), "flashsale.db"), down: new(atomic.Bool)}
	wrap := func(c driver.Connector) driver.Connector { return &faultConnector{inner: c, down: d.down} }
	db, err := database.OpenSQLite(ctx, d.path, database.WithConnector(wrap))
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	d.db = db
	tb.Cleanup(func() { closeGorm(db) })
	return d
}

func newRealDB(ctx context.Context, tb testing.TB) *TestDB {
	tb.Helper()
	raw, ok := realMySQLDSN()
	if !ok {
		tb.Fatalf("testenv: real database needs %s", EnvMySQLDSN)
	}
	cfg, err := database.MySQLConfig(raw)
	if err != nil {
		tb.Fatalf("testenv: %s: %v", EnvMySQLDSN, err)
	}
	if cfg.Net != "tcp" {
		tb.Fatalf("testenv: %s: network %q: only tcp(host:port) can be proxied", EnvMySQLDSN, cfg.Net)
	}
	d := &TestDB{tb: tb, mode: Real, name: testDBName(cfg.DBName)}

	admin, err := openAdmin(ctx, cfg)
	if err != nil {
		tb.Fatalf("testenv: %s: server %s does not answer: %v", EnvMySQLDSN, cfg.Addr, err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+d.name+"` CHARACTER SET utf8mb4"); err != nil {
		admin.Close()
		tb.Fatalf("testenv: create database %s on %s: %v", d.name, cfg.Addr, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+d.name+"`"); err != nil {
			tb.Errorf("testenv: drop database %s on %s: %v", d.name, cfg.Addr, err)
		}
		admin.Close()
	})

	proxy, err := NewProxy(cfg.Addr)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	d.proxy = proxy
	tb.Cleanup(proxy.Close) // runs before the DROP: cuts connections the test left open

	direct := cfg.Clone()
	direct.DBName = d.name
	d.directDSN = direct.FormatDSN()
	viaProxy := direct.Clone()
	viaProxy.Addr = proxy.Addr()
	d.dsn = viaProxy.FormatDSN()

	db, err := database.OpenMySQL(ctx, d.dsn, database.WithMaxOpenConns(realPoolSize))
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	d.db = db
	tb.Cleanup(func() { closeGorm(db) })
	return d
}

// testDBName derives a fresh database name from the DSN's:
// flashsale_test -> flashsale_test_t3fa9c1d2e4 (at most 64 characters).
func testDBName(base string) string {
	if base == "" {
		base = "flashsale"
	}
	base = strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, base)
	suffix := "_t" + randomID(5)
	if len(base)+len(suffix) > 64 {
		base = base[:64-len(suffix)]
	}
	return base + suffix
}

// openAdmin connects to the server without selecting a database, to create
// and drop test databases.
func openAdmin(ctx context.Context, cfg *mysql.Config) (*sql.DB, error) {
	ac := cfg.Clone()
	ac.DBName = ""
	conn, err := mysql.NewConnector(ac)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func closeGorm(db *gorm.DB) {
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
}
