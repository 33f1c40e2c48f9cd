package zklock

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFramesAnyPieces: frames finds every frame and its head, whatever
// pieces the stream arrives in.
func TestFramesAnyPieces(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i, size := range []int{16, 0, 3, 40, 16, 17, 1000, 8} {
		body := make([]byte, size)
		for j := range body {
			body[j] = byte(i*31 + j)
		}
		stream = binary.BigEndian.AppendUint32(stream, uint32(size))
		stream = append(stream, body...)
		want = append(want, body[:min(size, 16)])
	}
	for try := range 200 {
		var f frames
		var got [][]byte
		rest := stream
		for len(rest) > 0 {
			n := 1 + rand.IntN(min(len(rest), 1+try%50))
			f.feed(rest[:n], func(i int, head []byte) {
				if i != len(got) {
					t.Fatalf("frame numbered %d, want %d", i, len(got))
				}
				got = append(got, slices.Clone(head))
			})
			rest = rest[n:]
		}
		if len(got) != len(want) {
			t.Fatalf("try %d: %d frames, want %d", try, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("try %d: frame %d's head %v, want %v", try, i, got[i], want[i])
			}
		}
	}
}

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
