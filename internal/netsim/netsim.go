// Package netsim owns the simulated network between a shop and its
// backends. On loopback a round trip costs nothing, so a run measures the
// cores, not the round trips a strategy holds its product for; an RTT
// puts them back. Each link (the database, each Redis node, each etcd and
// ZooKeeper member) gets a loopback proxy that delays every chunk by half
// the link's RTT each way, as a delay line: chunks in flight wait
// together, so pipelined traffic is not serialised (package faultproxy).
// SQLite has no network; its connector waits one RTT per round trip a
// MySQL client would make instead (connector.go).
//
// Two ways a proxied link is not a wire: a dead upstream looks like a
// connection accepted then closed (EOF), not refused; and go-redis's
// Sentinel client drops every pooled connection on a master switch, since
// RemoteAddr is the proxy's (more reconnects, still correct).
package netsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/flashsale/flashsale/internal/faultproxy"
)

// ErrClosed is returned by Addr (and the dialers) after Close.
var ErrClosed = errors.New("netsim: network closed")

// Network puts an RTT on a shop's links. A nil *Network is valid and
// delays nothing: Addr returns the upstream, Dialer dials it directly.
// Its methods are safe for concurrent use; the caller must Close it once
// no client uses its addresses any more.
type Network struct {
	rtt RTT

	mu      sync.Mutex
	proxies map[route]*faultproxy.Proxy
	closed  bool
}

// route is one proxy's place: a link to one upstream.
type route struct {
	link     Link
	upstream string
}

// New returns a network with rtt on its links. It starts nothing until
// Addr is asked for a link that has an RTT.
func New(rtt RTT) *Network {
	return &Network{rtt: rtt, proxies: map[route]*faultproxy.Proxy{}}
}

// RTT returns the round-trip times n puts on its links; zero for nil.
func (n *Network) RTT() RTT {
	if n == nil {
		return RTT{}
	}
	return n.rtt
}

// Addr returns the address a client on link l dials to reach upstream
// (host:port): upstream itself when l has no RTT (or n is nil), else a
// loopback proxy that delays each chunk by half the RTT each way. The
// proxy is started on first use and shared by every client that asks for
// the same (l, upstream). Errors: ErrClosed after Close, on every link,
// with an RTT or not, so a client still dialling once its shop has closed
// fails the same way whatever its link; or the proxy's failure to listen.
func (n *Network) Addr(l Link, upstream string) (string, error) {
	if n == nil {
		return upstream, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return "", ErrClosed
	}
	if n.rtt.Of(l) == 0 {
		return upstream, nil
	}
	r := route{l, upstream}
	if p, ok := n.proxies[r]; ok {
		return p.Addr(), nil
	}
	p, err := faultproxy.New(upstream)
	if err != nil {
		return "", fmt.Errorf("netsim: %s link to %s: %w", l, upstream, err)
	}
	p.SetDelay(n.rtt.Of(l) / 2)
	n.proxies[r] = p
	return p.Addr(), nil
}

// Dialer returns a dial function (as go-redis's Options.Dialer takes) that
// reaches each address it is given through Addr, so that addresses a
// client learns from its server (a Redis Cluster's nodes, a Sentinel's
// master) are delayed too. With a nil n it dials directly. Its errors are
// Addr's and the dial's.
func (n *Network) Dialer(l Link) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		a, err := n.Addr(l, addr)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, a)
	}
}

// Close stops every proxy, cutting the connections through them. Addr
// fails after it. Closing a nil or closed Network does nothing.
func (n *Network) Close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	ps := n.proxies
	n.proxies, n.closed = nil, true
	n.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
}
