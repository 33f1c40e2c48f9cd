package fleet

import (
	"strings"
	"sync"
)

// tailWriter keeps the last max bytes written to it. It is safe for
// concurrent use.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// lines returns the last n lines kept, indented.
func (t *tailWriter) lines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return "  " + strings.Join(ls, "\n  ")
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
