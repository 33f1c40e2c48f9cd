package fleet

import (
	"fmt"
	"strings"
	"testing"
)

// The tail keeps the last bytes written, however they were cut into
// writes, and gives back the last lines, indented.
func TestTailWriter(t *testing.T) {
	w := &tailWriter{max: 20}
	for i := range 10 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got := string(w.buf); got != "ine 7\nline 8\nline 9\n" || len(got) != 20 {
		t.Errorf("kept %q, want the last 20 bytes", got)
	}
	if got := w.lines(2); got != "  line 8\n  line 9" {
		t.Errorf("lines(2) = %q", got)
	}
	if got := w.lines(10); !strings.HasPrefix(got, "  ine 7\n") {
		t.Errorf("lines(10) = %q, want what is kept, from its first byte", got)
	}
	if n, err := w.Write([]byte(strings.Repeat("x", 50))); n != 50 || err != nil || len(w.buf) != 20 {
		t.Errorf("a write longer than the tail: %d, %v, kept %d bytes", n, err, len(w.buf))
	}
	if (nopCloser{}).Close() != nil {
		t.Error("nopCloser")
	}
}
