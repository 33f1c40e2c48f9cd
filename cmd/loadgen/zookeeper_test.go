package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/strategy"
)

// hasZooKeeper reports whether strategies has the zookeeper row.
func hasZooKeeper(strategies []scenario.Strategy) bool {
	return slices.ContainsFunc(strategies, func(m scenario.Strategy) bool { return m.Name() == strategy.ZooKeeper })
}

// Where no ensemble can be started (no java on the PATH), the default
// rows show zookeeper as skipped, with the command that enables it, and
// run every other row; a --strategies that names it is refused, naming the
// flag; --zookeeper runs it on the ensemble named.
func TestZooKeeperRowWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no java

	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatalf("default flags: %v", err)
	}
	if hasZooKeeper(c.settings.Strategies) || c.startZK {
		t.Errorf("default strategies %v, start an ensemble %v: want no zookeeper row and nothing started", c.settings.Strategies, c.startZK)
	}
	if got, want := len(c.settings.Strategies), len(scenario.Strategies())-1; got != want {
		t.Errorf("%d rows run, want %d: every default row but zookeeper", got, want)
	}
	if len(c.skipped) != 1 || c.skipped[0].Strategy != scenario.Strategy(strategy.ZooKeeper) ||
		!strings.Contains(c.skipped[0].Why, "apt-get install zookeeper") || !strings.Contains(c.skipped[0].Why, "--zookeeper") {
		t.Errorf("skipped %+v, want the zookeeper row with the install line and --zookeeper", c.skipped)
	}

	if _, err := parseFlags([]string{"--strategies", "lua,zookeeper"}, io.Discard); err == nil || !strings.Contains(err.Error(), "strategies: zookeeper needs --zookeeper") {
		t.Errorf("--strategies lua,zookeeper without java: err %v, want one naming --zookeeper", err)
	}

	c, err = parseFlags([]string{"--zookeeper", "127.0.0.1:2181"}, io.Discard)
	if err != nil {
		t.Fatalf("--zookeeper: %v", err)
	}
	if !hasZooKeeper(c.settings.Strategies) || c.startZK || len(c.skipped) != 0 {
		t.Errorf("--zookeeper: strategies %v, start %v, skipped %v: want the row on the ensemble named", c.settings.Strategies, c.startZK, c.skipped)
	}
}

// Against --targets the default rows keep zookeeper if the fleet's shops
// say on /readyz that they lock on an ensemble, and show it as skipped if
// they do not or cannot say; --strategies that names it runs it there.
func TestZooKeeperRowWithTargets(t *testing.T) {
	shop := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name     string
		target   string
		args     []string
		wantRow  bool
		wantSkip bool
	}{
		{"fleet with an ensemble", shop(`{"status":"ready","zookeeper":"quorum"}`), nil, true, false},
		{"fleet without one", shop(`{"status":"ready","etcd":"quorum"}`), nil, false, true},
		{"fleet that does not answer", closed.URL, nil, false, true},
		{"row named", shop(`{"status":"ready"}`), []string{"--strategies", "lua,zookeeper"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(append([]string{"--targets", tc.target, "--admin-token", "t"}, tc.args...), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.startZK {
				t.Error("an ensemble would be started for a fleet of someone else's")
			}
			skipWithoutEnsemble(t.Context(), &c, tc.target)
			if got := hasZooKeeper(c.settings.Strategies); got != tc.wantRow {
				t.Errorf("zookeeper row run: %v, want %v (strategies %v)", got, tc.wantRow, c.settings.Strategies)
			}
			if got := len(c.skipped) == 1 && strings.Contains(c.skipped[0].Why, "--zookeeper"); got != tc.wantSkip {
				t.Errorf("skipped %+v, want skipped %v", c.skipped, tc.wantSkip)
			}
		})
	}
}
