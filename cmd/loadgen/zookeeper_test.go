package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/scenario"
	"github.com/flashsale/flashsale/internal/strategy"
)

// hasZooKeeper reports whether modes has the zookeeper row.
func hasZooKeeper(modes []scenario.Mode) bool {
	return slices.ContainsFunc(modes, func(m scenario.Mode) bool { return m.Strategy() == strategy.ZooKeeper })
}

// Where no ensemble can be started (no java on the PATH), the default
// rows show zookeeper as skipped, with the command that enables it, and
// run every other row; a --modes that names it is refused, naming the
// flag; --zookeeper runs it on the ensemble named.
func TestZooKeeperRowWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no java

	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatalf("default flags: %v", err)
	}
	if hasZooKeeper(c.settings.Modes) || c.startZK {
		t.Errorf("default modes %v, start an ensemble %v: want no zookeeper row and nothing started", c.settings.Modes, c.startZK)
	}
	if got, want := len(c.settings.Modes), len(scenario.Modes())-1; got != want {
		t.Errorf("%d rows run, want %d: every default row but zookeeper", got, want)
	}
	if len(c.skipped) != 1 || c.skipped[0].Mode != scenario.Mode(strategy.ZooKeeper) ||
		!strings.Contains(c.skipped[0].Why, "apt-get install zookeeper") || !strings.Contains(c.skipped[0].Why, "--zookeeper") {
		t.Errorf("skipped %+v, want the zookeeper row with the install line and --zookeeper", c.skipped)
	}

	if _, err := parseFlags([]string{"--modes", "lua,zookeeper"}, io.Discard); err == nil || !strings.Contains(err.Error(), "modes: zookeeper needs --zookeeper") {
		t.Errorf("--modes lua,zookeeper without java: err %v, want one naming --zookeeper", err)
	}

	c, err = parseFlags([]string{"--zookeeper", "127.0.0.1:2181"}, io.Discard)
	if err != nil {
		t.Fatalf("--zookeeper: %v", err)
	}
	if !hasZooKeeper(c.settings.Modes) || c.startZK || len(c.skipped) != 0 {
		t.Errorf("--zookeeper: modes %v, start %v, skipped %v: want the row on the ensemble named", c.settings.Modes, c.startZK, c.skipped)
	}
}

// Against --targets the default rows skip zookeeper (the fleet's ensemble
// is not known), and --modes that names it runs it there.
func TestZooKeeperRowWithTargets(t *testing.T) {
	fleet := []string{"--targets", "http://127.0.0.1:1", "--admin-token", "t"}
	c, err := parseFlags(fleet, io.Discard)
	if err != nil {
		t.Fatalf("--targets: %v", err)
	}
	if hasZooKeeper(c.settings.Modes) || len(c.skipped) != 1 || c.startZK {
		t.Errorf("--targets: modes %v, skipped %v, start %v: want zookeeper skipped", c.settings.Modes, c.skipped, c.startZK)
	}
	c, err = parseFlags(append(fleet, "--modes", "zookeeper"), io.Discard)
	if err != nil {
		t.Fatalf("--targets --modes zookeeper: %v", err)
	}
	if !hasZooKeeper(c.settings.Modes) || len(c.skipped) != 0 || c.startZK {
		t.Errorf("--targets --modes zookeeper: modes %v, skipped %v, start %v: want the row against the fleet", c.settings.Modes, c.skipped, c.startZK)
	}
}
