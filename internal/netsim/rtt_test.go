package netsim

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func TestParseRTT(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name, in, str            string
		db, redis, etcd, zookeep time.Duration
	}{
		{"empty is none", "", "0", 0, 0, 0, 0},
		{"zero is none", "0", "0", 0, 0, 0, 0},
		{"one time on every link", "1ms", "1ms", ms, ms, ms, ms},
		{"per link, the rest none", "db=2ms,redis=0.5ms", "db=2ms,redis=500µs", 2 * ms, ms / 2, 0, 0},
		{"per link, written out of order", " zookeeper=3ms , db=1ms ", "db=1ms,zookeeper=3ms", ms, 0, 0, 3 * ms},
		{"every link named alike", "db=1ms,redis=1ms,etcd=1ms,zookeeper=1ms", "1ms", ms, ms, ms, ms},
		{"a zero link", "db=0,redis=2ms", "redis=2ms", 0, 2 * ms, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRTT(tc.in)
			if err != nil {
				t.Fatalf("ParseRTT(%q): %v", tc.in, err)
			}
			for l, want := range map[Link]time.Duration{DB: tc.db, Redis: tc.redis, Etcd: tc.etcd, ZooKeeper: tc.zookeep} {
				if got := r.Of(l); got != want {
					t.Errorf("ParseRTT(%q).Of(%s): got %v, want %v", tc.in, l, got, want)
				}
			}
			if got := r.String(); got != tc.str {
				t.Errorf("ParseRTT(%q).String(): got %q, want %q", tc.in, got, tc.str)
			}
			back, err := ParseRTT(r.String())
			if err != nil || back != r {
				t.Errorf("ParseRTT(%q) read back: got %v, %v; want %v", r.String(), back, err, r)
			}
			if got, want := r.IsZero(), tc.str == "0"; got != want {
				t.Errorf("IsZero: got %v, want %v", got, want)
			}
		})
	}
}

func TestParseRTTErrors(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"not a duration", "fast"},
		{"no unit", "5"},
		{"negative", "-1ms"},
		{"unknown link", "mysql=1ms"},
		{"bad duration on a link", "db=x"},
		{"a link named twice", "db=1ms,db=2ms"},
		{"a part without a link", "db=1ms,2ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRTT(tc.in)
			if !errors.Is(err, ErrInvalidRTT) {
				t.Fatalf("ParseRTT(%q): got %v, want ErrInvalidRTT", tc.in, err)
			}
			if !strings.Contains(err.Error(), "db, redis, etcd, zookeeper") {
				t.Errorf("ParseRTT(%q): %q does not list the links", tc.in, err)
			}
		})
	}
}

func TestRTTIsAFlag(t *testing.T) {
	var r RTT
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	fs.Var(&r, "rtt", "round-trip time")
	if err := fs.Parse([]string{"--rtt", "db=2ms"}); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Of(DB), 2*time.Millisecond; got != want {
		t.Errorf("--rtt db=2ms: Of(db) got %v, want %v", got, want)
	}
	fs.SetOutput(new(strings.Builder))
	if err := fs.Parse([]string{"--rtt", "nope=1ms"}); err == nil {
		t.Errorf("--rtt nope=1ms: got no error, want one")
	}
}
