package porthold_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/flashsale/flashsale/internal/porthold"
)

// Free's ports are distinct and free: a listener can take each of them.
func TestFree(t *testing.T) {
	ports, err := porthold.Free(20)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ports), 20; got != want {
		t.Fatalf("len(Free(20)) = %d, want %d", got, want)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Errorf("port %d handed out twice in %v", p, ports)
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Errorf("Listen on free port %d: %v", p, err)
			continue
		}
		l.Close()
	}
}
