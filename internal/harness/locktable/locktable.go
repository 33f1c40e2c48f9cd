// Package locktable owns the measurement behind the textbook's lock
// throughput table: how many acquire-plus-release cycles per second each
// lock service gives on this machine, and how long one takes (p50, p99),
// beside what the table claims.
//
// The table the lesson starts from claims, for a lock:
//
//	single Redis   100,000 TPS   < 1 ms
//	Redlock         10,000 TPS   5–10 ms
//	etcd             5,000 TPS   5–20 ms
//	ZooKeeper        1,000 TPS   10–50 ms
//
// and calls the database's row lock slow, with no figure. A claimed TPS is
// a rate over many independent keys: nobody waits for anybody, and the
// figure is what the service can do. So Run measures two cases:
//
//   - independent keys: W workers, each with a key of its own, each in a
//     loop of acquire and release;
//   - one hot key: N contenders in the same loop on one key, where every
//     acquisition waits for the one before it to be released, and the rate
//     is that of the hand-off.
//
// The package knows no lock service: a System brings an Acquire, and the
// command that wires them (cmd/locktable) keeps each adapter a few lines.
// Run measures every system in every case, rounds times, interleaved (a
// round measures every system in a case before the next case), so that
// whatever else the machine does falls on all of them alike.
package locktable

import (
	"context"
	"fmt"
	"time"
)

// Acquire takes the lock key, waiting for its holder if need be, and
// returns the function that releases it. Keys are small integers: an
// adapter maps them to its own names (a Redis key, a row). Run calls it
// from many goroutines at once; it must be safe for that. It returns an
// error if the lock was not obtained, wrapping ctx.Err() when ctx ended the
// wait.
type Acquire func(ctx context.Context, key int) (release func(context.Context) error, err error)

// Kind names the lock service a System measures; it picks the claimed
// figures (Claimed).
type Kind int

// The lock services of the table, in the order the table lists them.
const (
	SingleRedis Kind = iota // the lua lock on one Redis
	Redlock                 // the lua lock on five independent Redis masters
	Etcd                    // etcd's lock recipe on a three-member cluster
	ZooKeeper               // ZooKeeper's lock recipe on a three-member ensemble
	RowLock                 // SELECT … FOR UPDATE in a transaction; commit releases
)

// Kinds returns every kind, in the table's order.
func Kinds() []Kind { return []Kind{SingleRedis, Redlock, Etcd, ZooKeeper, RowLock} }

// System is one row of the table: a lock service, and how to take its
// locks. A System with no Acquire is shown as skipped, with Skip as the
// reason (what to give to measure it): a row is never silently missing.
type System struct {
	Kind    Kind
	Name    string // as the row says it, e.g. "Redlock, 5 nodes (redlock)"
	Acquire Acquire
	Skip    string
}

// Case is one way of loading the locks: Workers goroutines in a loop, each
// on a key of its own, or all on one key (Hot).
type Case struct {
	Workers int
	Hot     bool
}

// Name says the case in the table's words.
func (c Case) Name() string {
	if c.Hot {
		return fmt.Sprintf("one hot key, %d contender%s", c.Workers, plural(c.Workers))
	}
	return fmt.Sprintf("independent keys, %d worker%s", c.Workers, plural(c.Workers))
}

// Cases returns the independent-keys case with workers, then one hot-key
// case per number of contenders.
func Cases(workers int, contenders []int) []Case {
	cs := []Case{{Workers: workers}}
	for _, n := range contenders {
		cs = append(cs, Case{Workers: n, Hot: true})
	}
	return cs
}

// Options bound a run. Warmup may be 0; every other field must be
// positive (Check).
type Options struct {
	Warmup   time.Duration // each cell runs at least this long before it counts (see measure)
	Duration time.Duration // then counts for this long
	Rounds   int           // cells per system and case
	MaxOps   int           // a cell stops counting after this many cycles
	// Pause is how long a worker waits after a failed acquire or release
	// before the next try, so that a service that refuses at once is not
	// asked in a tight loop.
	Pause time.Duration
}

// Check returns an error naming the first field out of its range.
func (o Options) Check() error {
	switch {
	case o.Warmup < 0:
		return fmt.Errorf("locktable: warm-up %v is negative", o.Warmup)
	case o.Duration <= 0:
		return fmt.Errorf("locktable: duration %v is not positive", o.Duration)
	case o.Rounds <= 0:
		return fmt.Errorf("locktable: %d rounds", o.Rounds)
	case o.MaxOps <= 0:
		return fmt.Errorf("locktable: at most %d ops per cell", o.MaxOps)
	}
	return nil
}

// Estimate is how long Run takes for n measured systems and cases, not
// counting the drain of each cell (the cycles in flight when it ends).
func (o Options) Estimate(n int, cases []Case) time.Duration {
	return time.Duration(n*len(cases)*o.Rounds) * (o.Warmup + o.Duration)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
