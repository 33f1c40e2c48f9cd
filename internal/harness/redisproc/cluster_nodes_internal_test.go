package redisproc

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// CLUSTER NODES as a real node printed it (redis 7.0), with a failing
// master, a slot being migrated and a line cut short added.
const nodesText = `813bbdf26b9d5ca8d6604b254b5a8ce650fbfa1d 127.0.0.1:7301@17301 myself,master - 0 1795852497000 1 connected 0-5460
b0098c928d0a457c46037e0f0315813d7c45125e 127.0.0.1:7306@17306 slave 813bbdf26b9d5ca8d6604b254b5a8ce650fbfa1d 0 1795852496554 1 connected
e35e2c05a5a50ae91b76535cdf7fa882d8114767 127.0.0.1:7302@17302 master,fail - 1795852496000 1795852496955 2 disconnected 5461-10921 10922 [10923->-b0098c928d0a457c46037e0f0315813d7c45125e]
f00 127.0.0.1:7303@17303 master -
`

func TestParseNodes(t *testing.T) {
	lines := parseNodes(nodesText)
	if len(lines) != 3 {
		t.Fatalf("parsed %d lines, want 3 (the short one skipped): %+v", len(lines), lines)
	}
	me, replica, failing := lines[0], lines[1], lines[2]
	if me.id != "813bbdf26b9d5ca8d6604b254b5a8ce650fbfa1d" || !me.is("myself") || !me.is("master") || me.is("slave") {
		t.Errorf("first line: %+v", me)
	}
	if !replica.is("slave") || replica.master != me.id || len(replica.ranges) != 0 {
		t.Errorf("replica line: %+v, want a slave of %s serving nothing", replica, me.id)
	}
	if !failing.is("fail") || failing.is("fail?") {
		t.Errorf("failing line flags %v, want fail and not fail?", failing.flags)
	}
	if want := []string{"5461-10921", "10922", "[10923->-b0098c928d0a457c46037e0f0315813d7c45125e]"}; !slices.Equal(failing.ranges, want) {
		t.Errorf("failing line ranges %q, want %q", failing.ranges, want)
	}
}

func TestServes(t *testing.T) {
	lines := parseNodes(nodesText)
	for _, tc := range []struct {
		line int
		slot int64
		want bool
	}{
		{0, 0, true}, {0, 5460, true}, {0, 5461, false},
		{1, 0, false},                                       // a replica serves no slot itself
		{2, 5461, true}, {2, 10921, true}, {2, 10922, true}, // a range, then a single slot
		{2, 10923, false}, // being migrated: not served here yet
		{2, 16383, false},
	} {
		if got := lines[tc.line].serves(tc.slot); got != tc.want {
			t.Errorf("line %d serves(%d) = %v, want %v", tc.line, tc.slot, got, tc.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"only", 1, "only"},
		{"", 3, ""},
	} {
		if got := lastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// Without the binaries on the PATH, both starters say which are missing
// and how to install them, and wrap their sentinel error.
func TestMissingBinaries(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := Binaries()
	if !errors.Is(err, ErrMissingBinaries) || !strings.Contains(err.Error(), "redis-server and redis-sentinel missing") ||
		!strings.Contains(err.Error(), InstallHint) {
		t.Errorf("Binaries: %v, want ErrMissingBinaries naming both and %q", err, InstallHint)
	}
	_, err = StartCluster(t.Context(), ClusterConfig{Dir: t.TempDir()})
	if !errors.Is(err, ErrMissingClusterBinaries) || !strings.Contains(err.Error(), "redis-server and redis-cli missing") {
		t.Errorf("StartCluster: %v, want ErrMissingClusterBinaries naming both", err)
	}
}
