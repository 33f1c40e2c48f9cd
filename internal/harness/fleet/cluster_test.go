package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// A fleet's servers keep their files in the log folder, which stays, or
// in a temporary folder, which the returned function removes.
func TestFilesDir(t *testing.T) {
	logs := t.TempDir()
	dir, remove, err := filesDir(logs, "redis-cluster", "flashsale-test-")
	if err != nil || dir != filepath.Join(logs, "redis-cluster") {
		t.Fatalf("filesDir in a log folder = %q, %v; want %s", dir, err, filepath.Join(logs, "redis-cluster"))
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("%s after remove: %v, want it kept", dir, err)
	}

	t.Setenv("TMPDIR", t.TempDir())
	tmp, remove, err := filesDir("", "redis-cluster", "flashsale-test-")
	if err != nil || !strings.HasPrefix(filepath.Base(tmp), "flashsale-test-") || filepath.Dir(tmp) != os.TempDir() {
		t.Fatalf("filesDir without a log folder = %q, %v; want a flashsale-test-* folder in %s", tmp, err, os.TempDir())
	}
	if err := os.WriteFile(filepath.Join(tmp, "nodes.conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("%s after remove: %v, want it gone with its files", tmp, err)
	}

	file := filepath.Join(logs, "file") // a log folder that is a file
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := filesDir(file, "redis-cluster", "flashsale-test-"); err == nil {
		t.Error("filesDir under a file: no error")
	}
}

// StartCluster starts a Redis Cluster of the fleet's own, its nodes'
// files in the log folder, names it in the fleet's backend, and closes it
// with the fleet; without the binaries it says which are missing.
func TestStartFleetWithCluster(t *testing.T) {
	env := testenv.NewEnv(t, testenv.Embedded)
	backends := &app.Backends{DB: env.DB.DB(), RedisAddrs: env.Redis.Addrs()}
	t.Run("without the binaries", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := StartFleet(t.Context(), FleetConfig{Shops: 1, StartCluster: true, LogDir: t.TempDir(), Backends: backends})
		if !errors.Is(err, redisproc.ErrMissingClusterBinaries) {
			t.Errorf("StartFleet = %v, want the missing cluster binaries", err)
		}
	})
	t.Run("with them", func(t *testing.T) {
		required := os.Getenv(testenv.EnvRequireRedisCluster) == "1"
		if !required {
			testenv.SkipShort(t, "starts six redis-server processes")
		}
		logs := t.TempDir()
		f, err := StartFleet(t.Context(), FleetConfig{Shops: 1, StartCluster: true, LogDir: logs, Backends: backends})
		if errors.Is(err, redisproc.ErrMissingClusterBinaries) && !required {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Cluster == nil {
			t.Fatal("no cluster in the fleet")
		}
		procs := f.Cluster.Processes()
		if want := "a Redis Cluster (" + strings.Join(f.Cluster.Addrs(), ","); !strings.Contains(f.Backend, want) {
			t.Errorf("backend %q, want it to name %q", f.Backend, want)
		}
		for _, addr := range f.Cluster.Addrs() { // a node that met a taken port started again on another: its first file stays
			_, port, _ := strings.Cut(addr, ":")
			if _, err := os.Stat(filepath.Join(logs, "redis-cluster", "nodes-"+port+".conf")); err != nil {
				t.Errorf("node %s's nodes file: %v, want it in the log folder", addr, err)
			}
		}
		f.Close()
		for _, p := range procs {
			select {
			case <-p.Exited():
			case <-time.After(10 * time.Second):
				t.Errorf("%s still runs after the fleet's Close", p.Name)
			}
		}
	})
}
