package netsim

import (
	"fmt"
	"net/url"
	"strings"
)

// Addrs returns the addresses a client on link l dials for servers: each
// host:port, or the host:port inside a URL (an etcd endpoint such as
// http://127.0.0.1:2379), replaced by Addr's. A nil n returns servers as
// given. Errors: a server that is not a URL it can parse, and Addr's.
func (n *Network) Addrs(l Link, servers []string) ([]string, error) {
	out := make([]string, len(servers))
	for i, s := range servers {
		hostPort, u := s, (*url.URL)(nil)
		if strings.Contains(s, "://") {
			var err error
			if u, err = url.Parse(s); err != nil {
				return nil, fmt.Errorf("netsim: %s server %q: %w", l, s, err)
			}
			hostPort = u.Host
		}
		a, err := n.Addr(l, hostPort)
		if err != nil {
			return nil, err
		}
		if u != nil {
			v := *u
			v.Host = a
			a = v.String()
		}
		out[i] = a
	}
	return out, nil
}
