package porthold

import (
	"fmt"
	"net"
)

// Free returns n distinct loopback ports that nothing listened on a moment
// ago. It keeps every listener open until all n are chosen, so no port is
// handed back twice; once it returns, the ports are free for anyone to take
// (Hold one to keep it). Safe for concurrent use; errors if the kernel has
// no free port to give.
func Free(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("porthold: find a free loopback port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
