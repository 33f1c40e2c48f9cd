package app

import (
	"net"
	"net/url"
	"testing"

	"github.com/flashsale/flashsale/internal/netsim"
)

// An etcd endpoint keeps its form (a URL stays a URL) and gets the link's
// proxy for its host:port; a link without an RTT keeps every address.
func TestLinkAddrs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	up := ln.Addr().String()
	rtt, err := netsim.ParseRTT("etcd=2ms")
	if err != nil {
		t.Fatal(err)
	}
	n := netsim.New(rtt)
	defer n.Close()

	got, err := linkAddrs(n, netsim.Etcd, []string{"http://" + up, up})
	if err != nil {
		t.Fatal(err)
	}
	proxy, _ := n.Addr(netsim.Etcd, up)
	if want := []string{"http://" + proxy, proxy}; got[0] != want[0] || got[1] != want[1] || proxy == up {
		t.Errorf("linkAddrs on a delayed link: got %q, want %q (not the upstream %s)", got, want, up)
	}
	if u, err := url.Parse(got[0]); err != nil || u.Scheme != "http" {
		t.Errorf("the endpoint %q is no longer an http URL: %v", got[0], err)
	}
	if got, err := linkAddrs(n, netsim.ZooKeeper, []string{up}); err != nil || got[0] != up {
		t.Errorf("linkAddrs on a link without an RTT: got %q, %v; want %q", got, err, up)
	}
	if got, err := linkAddrs(nil, netsim.Etcd, []string{"http://" + up}); err != nil || got[0] != "http://"+up {
		t.Errorf("linkAddrs without a network: got %q, %v; want the endpoint as given", got, err)
	}
}
