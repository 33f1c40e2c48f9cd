package netsim

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Link names one kind of link from a shop to its backends. Every link of
// a kind has the same round-trip time: each Redis node's, each etcd
// member's.
type Link string

// The links a shop has.
const (
	DB        Link = "db"        // to the database
	Redis     Link = "redis"     // to each Redis node, Sentinel and cluster node
	Etcd      Link = "etcd"      // to each etcd member
	ZooKeeper Link = "zookeeper" // to each ZooKeeper member
)

// links lists every Link, in the order String writes them.
var links = [...]Link{DB, Redis, Etcd, ZooKeeper}

// ErrInvalidRTT is wrapped by ParseRTT's (and Set's) errors.
var ErrInvalidRTT = errors.New("netsim: invalid rtt")

// RTT is a round-trip time per link; the zero value puts none on any.
// It is a comparable value, safe to copy and to read concurrently.
type RTT struct{ d [len(links)]time.Duration }

// ParseRTT reads a round-trip time: "" or "0" is none; a duration ("1ms")
// puts it on every link; "db=2ms,redis=0.5ms" puts each on its link and
// none on the links not named. Errors wrap ErrInvalidRTT and list the
// link names: an unknown or repeated link, a bad or negative duration.
func ParseRTT(s string) (RTT, error) {
	var r RTT
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return r, nil
	}
	if !strings.Contains(s, "=") {
		d, err := duration(s)
		if err != nil {
			return RTT{}, err
		}
		for i := range r.d {
			r.d[i] = d
		}
		return r, nil
	}
	seen := map[Link]bool{}
	for _, part := range strings.Split(s, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		l := Link(strings.TrimSpace(name))
		i := index(l)
		if i < 0 || seen[l] {
			what := "unknown link"
			if seen[l] {
				what = "link named twice"
			}
			return RTT{}, fmt.Errorf("%w: %s %q in %q (links: %s)", ErrInvalidRTT, what, l, s, linkNames())
		}
		seen[l] = true
		d, err := duration(value)
		if err != nil {
			return RTT{}, err
		}
		r.d[i] = d
	}
	return r, nil
}

func duration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %q is not a duration such as 1ms (a time on every link) or db=2ms,redis=0.5ms (links: %s)", ErrInvalidRTT, s, linkNames())
	}
	return d, nil
}

func index(l Link) int {
	for i, x := range links {
		if x == l {
			return i
		}
	}
	return -1
}

func linkNames() string {
	names := make([]string, len(links))
	for i, l := range links {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// Of returns l's round-trip time; zero for a link it does not know.
func (r RTT) Of(l Link) time.Duration {
	if i := index(l); i >= 0 {
		return r.d[i]
	}
	return 0
}

// IsZero reports whether no link has a round-trip time.
func (r RTT) IsZero() bool { return r == RTT{} }

// String writes r so that ParseRTT reads it back: "0", one duration when
// every link has the same ("1ms"), else the links that have one, in link
// order ("db=2ms,redis=500µs").
func (r RTT) String() string {
	if r.IsZero() {
		return "0"
	}
	same := true
	for _, d := range r.d {
		same = same && d == r.d[0]
	}
	if same {
		return r.d[0].String()
	}
	var parts []string
	for i, d := range r.d {
		if d != 0 {
			parts = append(parts, string(links[i])+"="+d.String())
		}
	}
	return strings.Join(parts, ",")
}

// Set parses s into r (flag.Value), with ParseRTT's errors.
func (r *RTT) Set(s string) error {
	v, err := ParseRTT(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}
