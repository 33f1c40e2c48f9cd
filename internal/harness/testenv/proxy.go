package testenv

import "github.com/flashsale/flashsale/internal/faultproxy"

// Proxy is a loopback TCP proxy in front of one server (package
// faultproxy): Stop makes the server look dead, Hold makes the link stall,
// SetDelay makes it slow. The helpers in this package close theirs at test
// cleanup.
type Proxy = faultproxy.Proxy

// NewProxy starts a proxy on a random 127.0.0.1 port that forwards every
// connection to upstream (host:port); see faultproxy.New.
func NewProxy(upstream string) (*Proxy, error) { return faultproxy.New(upstream) }
