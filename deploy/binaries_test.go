package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

// binDir holds the shop and loadgen binaries, built once per test run by the
// first test that asks for their --help.
var binDir string

func TestMain(m *testing.M) {
	if err := chdirModuleRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "flashsale-deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// chdirModuleRoot moves the test into the directory that holds go.mod,
// where compose.yaml sits and from which it names its files.
func chdirModuleRoot() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return os.Chdir(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return errors.New("deploy_test: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// buildBinaries builds cmd/shop and cmd/loadgen into binDir in one go build.
// Under `go test -race` it builds with -race too, so the packages already
// compiled for the tests (or by .ci/run's go build -race) come from the
// build cache instead of compiling twice.
var buildBinaries = sync.OnceValue(func() error {
	// No symbol table or DWARF: the linker is most of the time when the
	// packages are cached, and --help needs neither.
	args := []string{"build", "-ldflags=-s -w", "-o", binDir + string(filepath.Separator)}
	if raceEnabled() {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/shop", "./cmd/loadgen")
	// Generous: on a cold cache, while every other package's tests compile
	// on a 2-core machine, compiling etcd's server with -race took over
	// five minutes. The bound is there so that a build that hangs fails
	// the test rather than the run's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %v: %v\n%s", args, err, out)
	}
	return nil
})

// raceEnabled reports whether this test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// helpOutput returns what `<name> --help` prints (flag usage goes to stderr).
// Under -short it skips the test instead: building the binaries is most
// of a cold -short run.
func helpOutput(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: skips building %s for its --help", name)
	}
	if err := buildBinaries(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The exit status is not checked: the flag package exits 0 for -help,
	// other parsers exit 2. The text is what counts.
	out, _ := exec.CommandContext(ctx, filepath.Join(binDir, name), "--help").CombinedOutput()
	if len(out) == 0 {
		t.Fatalf("%s --help printed nothing", name)
	}
	return string(out)
}

// mentionsEnv reports whether help names the environment variable env as a
// whole word (SHOP_REDIS, not SHOP_REDIS_ADDRS).
func mentionsEnv(help, env string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(env) + `([^A-Za-z0-9_]|$)`).MatchString(help)
}

// mentionsFlag reports whether help documents the flag name, as the flag
// package prints it ("  -name value") or as GNU-style parsers do ("--name").
func mentionsFlag(help, name string) bool {
	return regexp.MustCompile(`(^|\s)--?` + regexp.QuoteMeta(name) + `([\s=,]|$)`).MatchString(help)
}
