package zklock

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEscapeKey: every key is one znode name, different keys different
// names.
func TestEscapeKey(t *testing.T) {
	keys := []string{"", ".", "..", "%", "%25", "a/b", "a%2Fb", "flashsale:lock:{p1}", "é", "a b", "%2E"}
	seen := map[string]string{}
	for _, k := range keys {
		n := escapeKey(k)
		if n == "" || n == "." || n == ".." || slices.Contains([]byte(n), '/') {
			t.Errorf("escapeKey(%q) = %q, not a znode name", k, n)
		}
		if other, ok := seen[n]; ok {
			t.Errorf("escapeKey(%q) = escapeKey(%q) = %q", k, other, n)
		}
		seen[n] = k
	}
	if got := escapeKey("flashsale:lock:{p1}"); got != "flashsale:lock:{p1}" {
		t.Errorf("escapeKey kept a plain key as %q", got)
	}
}

// TestParseNode: the queue reads names it made, ordered by sequence
// number, and ignores others.
func TestParseNode(t *testing.T) {
	names := []string{
		"_c_b-lock-0000000010", "other", "_c_a-lock-0000000002", "_c_c-lock-12", "lock-0000000001",
	}
	q := queue(names)
	var got []string
	for _, n := range q {
		got = append(got, n.id)
	}
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("queue ids %v, want %v", got, want)
	}
}

// TestNodeName: the name the ensemble makes of nodePrefix, with its ten
// digits appended, reads back as the acquisition's id and sequence
// number, under the key's directory.
func TestNodeName(t *testing.T) {
	m := &Locker{root: "/flashsale/dlock"}
	dir := m.dir("flashsale:lock:{p/1}")
	if dir != "/flashsale/dlock/locks/flashsale:lock:{p%2F1}" {
		t.Errorf("dir = %q", dir)
	}
	id := "3f2a9c1e-0b7d-4c55-9e1a-2b6c8d4f0a11"
	path := nodePrefix(dir, id) + "0000000042"
	if !strings.HasPrefix(path, dir+"/") || strings.Contains(base(path), "/") {
		t.Fatalf("node %q not a child of %q", path, dir)
	}
	n, ok := parseNode(base(path))
	if !ok || n.id != id || n.seq != 42 || n.name != base(path) {
		t.Errorf("parseNode(%q) = %+v, %v; want id %s, seq 42", base(path), n, ok, id)
	}
	if m.epochPath() != "/flashsale/dlock/epoch" {
		t.Errorf("epochPath = %q", m.epochPath())
	}
}

// TestPredecessor: an entry waits for the node just before its own, not
// the holder (no herd); the first waits for nothing; one whose node is
// gone is told so. Its own id's leftover (a create whose answer was lost,
// made again) is not waited for, and nodes that are not queue nodes are
// passed over.
func TestPredecessor(t *testing.T) {
	node := func(id string, seq int) string {
		return protected + id + lockWord + strings.Repeat("0", seqDigits-len(strconv.Itoa(seq))) + strconv.Itoa(seq)
	}
	mine := node("me", 5)
	for _, tc := range []struct {
		name   string
		queue  []string
		want   string
		wantOK bool
	}{
		{"first", []string{mine, node("b", 7)}, "", true},
		{"third", []string{node("b", 3), mine, node("a", 1), node("c", 9)}, node("b", 3), true},
		{"gone", []string{node("a", 1), node("b", 3)}, "", false},
		{"own leftover before", []string{node("a", 1), node("me", 2), mine}, node("a", 1), true},
		{"own leftover alone before", []string{node("me", 2), mine}, "", true},
		{"strangers", []string{"lock-0000000004", node("a", 1), "_c_x-lock-12", mine}, node("a", 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &entry{m: bareLocker(t), dir: "/d", id: "me", name: mine}
			got, ok := e.predecessor(tc.queue)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("predecessor = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
	if got := queue([]string{node("b", 10), node("a", 9)}); !slices.EqualFunc(got, []string{"a", "b"}, func(n queued, id string) bool { return n.id == id }) {
		t.Errorf("queue ordered %v, want by sequence number", got)
	}
}
