package netsim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flashsale/flashsale/internal/netsim"
)

// After Close every link answers ErrClosed, whether it has an RTT or not,
// and so does a dialer on it.
func TestNetworkAddrAfterCloseIsErrClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		link netsim.Link
	}{{"link with an RTT", netsim.DB}, {"link without one", netsim.Redis}} {
		t.Run(c.name, func(t *testing.T) {
			n := netsim.New(parse(t, "db=2ms"))
			n.Close()
			if _, err := n.Addr(c.link, "127.0.0.1:6379"); !errors.Is(err, netsim.ErrClosed) {
				t.Errorf("Addr after Close: got %v, want ErrClosed", err)
			}
			dial := n.Dialer(c.link)
			if _, err := dial(context.Background(), "tcp", "127.0.0.1:6379"); !errors.Is(err, netsim.ErrClosed) {
				t.Errorf("dial after Close: got %v, want ErrClosed", err)
			}
		})
	}
}
