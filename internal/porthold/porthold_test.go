package porthold_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/flashsale/flashsale/internal/porthold"
)

// A held port is not handed to listeners asking for port 0, refuses
// connections as a stopped server does, and is free again once released.
func TestHold(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if _, err := porthold.Hold(addr); err == nil {
		t.Fatalf("Hold(%s) while a listener is on it: got no error", addr)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // the server's side closes first: TIME_WAIT on its port
	c.Close()
	ln.Close()

	h, err := porthold.Hold(addr)
	if err != nil {
		t.Fatalf("Hold(%s) after the listener closed: %v", addr, err)
	}
	defer h.Release()
	// Without the hold, the kernel hands a freed port to a listener asking
	// for port 0 within a few thousand listens (695 and 3,672 in two tries
	// on the machine this was written on).
	for i := range 30000 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := l.Addr().String()
		l.Close()
		if got == addr {
			t.Fatalf("a listener on port 0 got the held port %s (listen %d)", addr, i)
		}
	}
	if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Dial(%s) while held: got %v, want ECONNREFUSED", addr, err)
	}
	h.Release()
	h.Release() // a second Release does nothing
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("Listen(%s) after Release: %v", addr, err)
	}
	l.Close()
}

func TestHoldWantsAPort(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:80", "[::1]:80", "nonsense"} {
		if _, err := porthold.Hold(addr); err == nil {
			t.Errorf("Hold(%q): got no error", addr)
		}
	}
}
