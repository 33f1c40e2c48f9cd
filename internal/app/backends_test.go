package app_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// TestOpenBackendsEmbedded opens the zero-setup default, serves /readyz on
// it, and checks that Close removes the SQLite file.
func TestOpenBackendsEmbedded(t *testing.T) {
	b, err := app.OpenBackends(t.Context(), app.Config{Logger: quiet})
	if err != nil {
		t.Fatalf("OpenBackends: %v", err)
	}
	if b.Embedded == nil || b.SQLite == nil {
		t.Fatalf("Embedded, SQLite = %v, %v; want both set", b.Embedded, b.SQLite)
	}
	if got, want := len(b.RedisAddrs), app.EmbeddedRedisNodes; got != want {
		t.Errorf("len(RedisAddrs) = %d, want %d", got, want)
	}
	readyz(t, b)
	path := b.SQLite.Path
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SQLite file %s after Close: %v, want it gone", path, err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestOpenBackendsReal opens the real servers through their DSN and
// addresses, as cmd/shop does with flags. Migrations run a second time on a
// migrated database, which must be harmless.
func TestOpenBackendsReal(t *testing.T) {
	if len(testenv.EnvModes(t)) < 2 {
		t.Skipf("needs %s and %s", testenv.EnvMySQLDSN, testenv.EnvRedisAddrs)
	}
	env := testenv.NewEnv(t, testenv.Real)
	b, err := app.OpenBackends(t.Context(), app.Config{MySQLDSN: env.DB.DSN(), RedisAddrs: env.Redis.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatalf("OpenBackends: %v", err)
	}
	defer b.Close()
	if b.Embedded != nil || b.SQLite != nil {
		t.Errorf("real backends report embedded parts")
	}
	readyz(t, b)
}

func readyz(t *testing.T, b *app.Backends) {
	t.Helper()
	shop, err := app.NewShop(t.Context(), app.Config{Logger: quiet}, b)
	if err != nil {
		t.Fatalf("NewShop: %v", err)
	}
	defer shop.Close()
	rec := httptest.NewRecorder()
	shop.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("readyz = %d %s, want 200", rec.Code, rec.Body)
	}
	if len(b.EtcdEndpoints) > 0 && !strings.Contains(rec.Body.String(), `"etcd":"quorum"`) {
		t.Errorf("readyz = %s, want it to say etcd's quorum answered", rec.Body)
	}
}

// TestOpenBackendsInvalid checks that malformed settings fail before
// anything is opened, with errors callers can tell apart.
func TestOpenBackendsInvalid(t *testing.T) {
	tests := []struct {
		name string
		cfg  app.Config
		want error
	}{
		{"dsn without database", app.Config{MySQLDSN: "root@tcp(127.0.0.1:3306)/"}, database.ErrInvalidDSN},
		{"dsn garbage", app.Config{MySQLDSN: "not a dsn"}, database.ErrInvalidDSN},
		{"redis without port", app.Config{RedisAddrs: []string{"127.0.0.1"}}, app.ErrInvalidRedisAddr},
		{"redis bad port", app.Config{RedisAddrs: []string{"127.0.0.1:x"}}, app.ErrInvalidRedisAddr},
		{"sentinel without port", app.Config{RedisMaster: app.SentinelMaster{Sentinels: []string{"127.0.0.1"}, Name: "m"}}, app.ErrInvalidRedisAddr},
		{"sentinels without a name", app.Config{RedisMaster: app.SentinelMaster{Sentinels: []string{"127.0.0.1:26379"}}}, app.ErrIncompleteSentinelMaster},
		{"zookeeper without port", app.Config{ZooKeeper: []string{"127.0.0.1"}}, app.ErrInvalidZooKeeper},
		{"a name without sentinels", app.Config{RedisMaster: app.SentinelMaster{Name: "m"}}, app.ErrIncompleteSentinelMaster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Logger = quiet
			b, err := app.OpenBackends(t.Context(), tt.cfg)
			if err == nil {
				b.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("OpenBackends = %v, want %v", err, tt.want)
			}
		})
	}
}
