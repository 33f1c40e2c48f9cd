package faultproxy

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer answers every line with the same line, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func newTestProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// roundTrip sends one line through a connection and reads the echo.
func roundTrip(c net.Conn, msg string) (string, error) {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

func TestProxyForwards(t *testing.T) {
	p := newTestProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := roundTrip(c, "hello")
	if err != nil || got != "hello" {
		t.Fatalf("round trip: got %q, %v; want %q, nil", got, err, "hello")
	}
}

func TestProxyStopCutsAndRefusesThenStartRestores(t *testing.T) {
	p := newTestProxy(t)
	addr := p.Addr()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "before"); err != nil {
		t.Fatalf("before stop: %v", err)
	}

	p.Stop()
	start := time.Now()
	if _, err := roundTrip(c, "during"); err == nil {
		t.Fatalf("live connection after Stop: got no error, want one")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("live connection failed after %v, want fast", took)
	}
	if c2, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c2.Close()
		t.Fatalf("dial after Stop: got a connection, want refused")
	}

	if err := p.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := p.Addr(); got != addr {
		t.Errorf("address after Start: got %s, want %s", got, addr)
	}
	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial after Start: %v", err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3, "after"); err != nil || got != "after" {
		t.Fatalf("after Start: got %q, %v; want %q, nil", got, err, "after")
	}
}

func TestProxyDelay(t *testing.T) {
	p := newTestProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const d = 100 * time.Millisecond
	p.SetDelay(d)
	start := time.Now()
	if _, err := roundTrip(c, "slow"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*d {
		t.Errorf("round trip with delay %v: took %v, want at least %v", d, took, 2*d)
	}
	p.SetDelay(0)
	start = time.Now()
	if _, err := roundTrip(c, "fast"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > d {
		t.Errorf("round trip without delay: took %v, want under %v", took, d)
	}
}

func TestProxyCloseIsFinal(t *testing.T) {
	p := newTestProxy(t)
	p.Close()
	if err := p.Start(); err == nil {
		t.Fatalf("Start after Close: got nil, want an error")
	}
	p.Close() // twice is fine
}

// A held proxy keeps the connection open and forwards nothing; once
// released, what was sent meanwhile arrives.
func TestProxyHoldStallsThenReleaseDelivers(t *testing.T) {
	p := newTestProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "before"); err != nil {
		t.Fatalf("before Hold: %v", err)
	}
	p.Hold()
	if !p.Held() {
		t.Fatalf("Held after Hold: got false, want true")
	}
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("held\n")); err != nil {
		t.Fatalf("write while held: %v, want the connection open", err)
	}
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("read while held: got %q, want a timeout", line)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("read while held: got %v, want a timeout (not a closed connection)", err)
	}
	p.Release()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("after Release: got %q, %v; want %q", line, err, "held\n")
	}
}

// HoldAt forwards what the server sends up to the place its cut finds,
// then holds the rest, as Hold does, until Release; what the client sends
// is not looked into.
func TestProxyHoldAtCutsWhatTheServerSends(t *testing.T) {
	p := newTestProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "CUT before"); err != nil { // not cut: no HoldAt yet
		t.Fatalf("before HoldAt: %v", err)
	}
	p.HoldAt(func(b []byte) int { return strings.Index(string(b), "CUT") })
	c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := c.Write([]byte("kept|CUT|held\n")); err != nil {
		t.Fatalf("write: %v", err)
	}
	got := make([]byte, 64)
	n, err := io.ReadAtLeast(c, got, len("kept|"))
	if err != nil || string(got[:n]) != "kept|" {
		t.Fatalf("before the cut: got %q, %v; want %q", got[:n], err, "kept|")
	}
	if !p.Held() {
		t.Fatalf("Held after the cut: got false, want true")
	}
	if n, err := c.Read(got); err == nil {
		t.Fatalf("read past the cut while held: got %q, want a timeout", got[:n])
	}
	p.Release()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "CUT|held\n" {
		t.Fatalf("after Release: got %q, %v; want %q", line, err, "CUT|held\n")
	}
	if got, err := roundTrip(c, "CUT after"); err != nil || got != "CUT after" { // the cut was used up
		t.Fatalf("after Release: got %q, %v; want %q", got, err, "CUT after")
	}
}

// HoldOnly narrows a hold to the connections whose client sent what the
// match looks for: a replica's PSYNC is held, a client beside it is not.
func TestProxyHoldOnlyHoldsThePickedConnections(t *testing.T) {
	p := newTestProxy(t)
	p.HoldOnly(func(b []byte) bool { return strings.Contains(string(b), "PSYNC") })
	replica, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := roundTrip(replica, "PSYNC ? -1"); err != nil {
		t.Fatalf("the replica before the hold: %v", err)
	}
	p.Hold()
	if got, err := roundTrip(client, "GET k"); err != nil || got != "GET k" {
		t.Errorf("a client while held: %q, %v; want its answer at once", got, err)
	}
	replica.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := replica.Write([]byte("REPLCONF ACK 1\n")); err != nil {
		t.Fatalf("the replica writes while held: %v", err)
	}
	r := bufio.NewReader(replica)
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("the replica reads while held: %q, want a timeout", line)
	}
	p.Release()
	replica.SetDeadline(time.Now().Add(2 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "REPLCONF ACK 1\n" {
		t.Fatalf("the replica after Release: %q, %v", line, err)
	}
}
