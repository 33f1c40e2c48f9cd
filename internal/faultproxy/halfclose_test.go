package faultproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// serveEach runs handle on every connection a fresh listener accepts, and
// closes the connection when handle returns.
func serveEach(t *testing.T, handle func(net.Conn)) string {
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
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return ln.Addr().String()
}

// replyAfterEOF reads the whole request, then answers it.
func replyAfterEOF(c net.Conn) {
	b, _ := io.ReadAll(c)
	c.Write([]byte("reply:" + string(b)))
}

// sendAndHalfClose dials p, sends req and half-closes the connection.
func sendAndHalfClose(t *testing.T, p *Proxy, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	return c
}

// A client that half-closes after its request still gets the reply the
// server sends once it has read EOF, with or without a delay.
func TestProxyHalfCloseKeepsTheReply(t *testing.T) {
	for _, d := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run("delay "+d.String(), func(t *testing.T) {
			p := newProxyTo(t, serveEach(t, replyAfterEOF))
			p.SetDelay(d)
			c := sendAndHalfClose(t, p, "req")
			got, err := io.ReadAll(c)
			if want := "reply:req"; string(got) != want || err != nil {
				t.Errorf("after CloseWrite: got %q, %v; want %q", got, err, want)
			}
		})
	}
}

// A held proxy keeps a half-closed request, EOF included: the server sees
// neither until Release, then answers.
func TestProxyHalfCloseWhileHeldWaitsForRelease(t *testing.T) {
	p := newProxyTo(t, serveEach(t, replyAfterEOF))
	p.Hold()
	c := sendAndHalfClose(t, p, "req")
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	one := make([]byte, 1)
	if n, err := c.Read(one); n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("while held: got %q, %v; want a timeout", one[:n], err)
	}
	p.Release()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	got, err := io.ReadAll(c)
	if want := "reply:req"; string(got) != want || err != nil {
		t.Errorf("after Release: got %q, %v; want %q", got, err, want)
	}
}

// Once both sides have ended, the proxy closes the connection on its own:
// nothing is left live.
func TestProxyHalfCloseThenServerEndClosesBothSides(t *testing.T) {
	p := newProxyTo(t, serveEach(t, replyAfterEOF))
	c := sendAndHalfClose(t, p, "req")
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for live(p) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := live(p); n != 0 {
		t.Errorf("sockets live after both sides ended: %d, want 0", n)
	}
}

// A connection half-closed one way and idle the other stays open until
// Close, which then ends every goroutine of the proxy promptly.
func TestProxyCloseEndsAHalfClosedConnection(t *testing.T) {
	quiet := make(chan struct{})
	t.Cleanup(func() { close(quiet) })
	silent := serveEach(t, func(c net.Conn) { io.ReadAll(c); <-quiet }) // reads the request, never answers
	p, err := New(silent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	sendAndHalfClose(t, p, "req")
	deadline := time.Now().Add(3 * time.Second)
	for live(p) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := live(p); n != 2 {
		t.Fatalf("sockets live after a half-close: %d, want 2", n)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }() // Close waits for the proxy's goroutines
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return: a goroutine of the half-closed connection is left")
	}
}

func newProxyTo(t *testing.T, upstream string) *Proxy {
	t.Helper()
	p, err := New(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// live counts the sockets the proxy tracks, both sides of each connection.
func live(p *Proxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}
