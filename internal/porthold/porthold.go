// Package porthold picks free loopback ports (Free, the one picker every
// server and test here uses) and keeps a stopped server's port from being
// taken before the server starts again on it (Hold).
//
// A server that stops and comes back must come back on the same port: its
// clients were given that address. A port given up is fair game, though:
// the kernel hands every free port to whichever process asks for port 0
// next, and a test run opens listeners by the thousand, so a server
// restarted a second later can find its port taken ("address already in
// use"). Hold binds a socket to the port and never listens on it: the
// kernel then hands the port to nobody who asks for port 0, and a client
// that connects is refused, as by a server that is down. (On Linux a
// listener that names the port itself and sets SO_REUSEADDR, as Go's do,
// can still bind it: the hold keeps out the kernel's choices, not a
// deliberate one. The server coming back releases the hold first.) A server
// stopped and started with a Hold gives its port up for the instants
// between closing its listener and Hold, and between Release and listening
// again, not for the whole stop.
package porthold

import (
	"fmt"
	"net/netip"
)

// Held is a port bound by Hold. Release lets go of it; it is safe to call
// more than once, but not concurrently.
type Held struct {
	fd int
}

// Hold binds an IPv4 TCP socket to addr (host:port, the port not 0)
// without listening. It fails while something listens on the port; it
// works once the listener has closed, even with its connections still in
// TIME_WAIT (as the listeners of Go's net package do, it sets
// SO_REUSEADDR). Where there is no such socket call (not a Unix), it
// returns an error and the port is left to chance.
func Hold(addr string) (*Held, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Unmap().Is4() || ap.Port() == 0 {
		return nil, fmt.Errorf("porthold: hold %q: want an IPv4 host:port with a port", addr)
	}
	fd, err := bind(ap.Addr().Unmap().As4(), int(ap.Port()))
	if err != nil {
		return nil, fmt.Errorf("porthold: hold %s: %w", addr, err)
	}
	return &Held{fd: fd}, nil
}

// Release lets go of the port. A nil Held has nothing to release.
func (h *Held) Release() {
	if h != nil && h.fd >= 0 {
		closeFD(h.fd)
		h.fd = -1
	}
}
