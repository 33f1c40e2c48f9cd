package faultproxy

import (
	"bufio"
	"fmt"
	"net"
	"testing"
	"time"
)

// lineSink accepts one connection and reports on the channel once it has
// read n lines from it.
func lineSink(t *testing.T, n int) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for range n {
			if _, err := r.ReadString('\n'); err != nil {
				got <- err
				return
			}
		}
		got <- nil
	}()
	return ln.Addr().String(), got
}

// A pipelined burst waits one delay, not one per chunk: each chunk is sent
// its delay after it was read, whatever is queued ahead of it.
func TestProxyDelayLineDoesNotSerialiseABurst(t *testing.T) {
	const n, d = 50, 200 * time.Millisecond
	sink, got := lineSink(t, n)
	p, err := New(sink)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	p.SetDelay(d)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	for i := range n { // one write each: as many chunks as the proxy's reads see
		if _, err := fmt.Fprintf(c, "request %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the server reading the burst: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the burst of %d has not arrived after 10s", n)
	}
	took := time.Since(start)
	if took < d {
		t.Errorf("a burst of %d through delay %v arrived after %v, want at least %v", n, d, took, d)
	}
	if took >= 2*d {
		t.Errorf("a burst of %d through delay %v arrived after %v, want under %v (one delay, not one per chunk)", n, d, took, 2*d)
	}
}

// Pipelined round trips: n requests sent at once are all answered in about
// one round trip (2·d), never less.
func TestProxyDelayLinePipelinedRoundTrips(t *testing.T) {
	const n, d = 50, 100 * time.Millisecond
	p := newTestProxy(t)
	p.SetDelay(d)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)

	start := time.Now()
	for i := range n {
		if _, err := fmt.Fprintf(c, "request %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		line, err := r.ReadString('\n')
		if want := fmt.Sprintf("request %d\n", i); err != nil || line != want {
			t.Fatalf("answer %d: got %q, %v; want %q", i, line, err, want)
		}
	}
	took := time.Since(start)
	if took < 2*d {
		t.Errorf("%d pipelined round trips through delay %v took %v, want at least %v", n, d, took, 2*d)
	}
	if took >= 4*d {
		t.Errorf("%d pipelined round trips through delay %v took %v, want under %v (one round trip, not one per request)", n, d, took, 4*d)
	}
}
