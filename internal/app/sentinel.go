package app

// A Redis master that Sentinels manage, for the modes that lock on one
// Redis.
//
// lua, naive and fenced lock on one Redis, and the dedupe lock and
// redis-decr's stock live there too. Without Sentinel that Redis is the
// first --redis node, and when it dies those modes answer 503 until it is
// back. With --redis-sentinel it is a master with replicas, watched by
// Redis Sentinels that promote a replica when the master fails. go-redis's
// failover client asks a Sentinel where the master is whenever it dials,
// and drops its connections to the old master when a Sentinel announces
// +switch-master, so the shop follows a failover by itself.
//
// What it does not promise: replication is asynchronous. A lock the old
// master granted just before it died may never have reached the replica,
// and the promoted replica grants it to a second buyer. That is the hazard
// Redlock exists for, and why redlock keeps its five independent masters
// (--redis) whatever the Sentinels do.
//
// The shop also asks the Sentinels itself: /readyz names the master, and
// flashsale_redis_master_changes_total counts the times the answer changed.
// Every answer, from a poll every masterPollEvery and from each /readyz, is
// compared with the one before; a failover and back within one poll is not
// seen.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// masterPollEvery is how often a shop asks its Sentinels where the master
// is, to count a change even when nobody asks /readyz.
const masterPollEvery = time.Second

// SentinelMaster names a Redis master that Redis Sentinels manage: the
// Sentinels to ask and the name they monitor it under. The zero value names
// none.
type SentinelMaster struct {
	// Sentinels are the Sentinels' addresses, host:port each.
	Sentinels []string
	// Name is the master's name in the Sentinels' configuration
	// (sentinel monitor <Name> host port quorum).
	Name string
}

// IsZero reports whether m names no master.
func (m SentinelMaster) IsZero() bool { return len(m.Sentinels) == 0 && m.Name == "" }

// ErrIncompleteSentinelMaster is wrapped by SentinelMaster.Check's error
// when only one of the Sentinels and the name is given.
var ErrIncompleteSentinelMaster = errors.New("app: a Sentinel-managed master needs both the Sentinels and the master's name")

// Check returns nil for the zero value and for a SentinelMaster with a name
// and Sentinels that are each host:port; otherwise an error wrapping
// ErrIncompleteSentinelMaster or ErrInvalidRedisAddr.
func (m SentinelMaster) Check() error {
	if m.IsZero() {
		return nil
	}
	if len(m.Sentinels) == 0 || m.Name == "" {
		return fmt.Errorf("%w (got Sentinels %q, name %q)", ErrIncompleteSentinelMaster, m.Sentinels, m.Name)
	}
	for _, a := range m.Sentinels {
		if err := CheckRedisAddr(a); err != nil {
			return fmt.Errorf("sentinel: %w", err)
		}
	}
	return nil
}

// Errors of failover.Addr. Their messages go into /readyz's 503.
var (
	errNoSuchMaster = errors.New("app: the Sentinels name no such master")
	errNoSentinel   = errors.New("app: no Sentinel answers")
)

// failover is one shop's link to its Sentinel-managed master: the failover
// client that the single-node modes use, a client per Sentinel to ask where
// the master is, and the poll that counts the master's changes. Its methods
// are safe for concurrent use; close ends it.
type failover struct {
	master    SentinelMaster
	client    *redis.Client           // go-redis's failover client
	sentinels []*redis.SentinelClient // one per Sentinel, in the order given
	changed   func()                  // counts a change of the master's address
	log       *slog.Logger

	mu       sync.Mutex
	asked    uint64 // questions asked so far
	last     string // the address last named; "" before the first answer
	lastSeen uint64 // the question whose answer last was

	stop context.CancelFunc // ends the poll
	done chan struct{}      // closed when the poll has ended
}

// openFailover dials nothing at once, like the other clients, and starts
// the poll. changed is called once per change of the master's address, from
// any goroutine. The caller must close the failover.
func openFailover(m SentinelMaster, dial dialer, changed func(), log *slog.Logger) *failover {
	f := &failover{master: m, client: newFailoverClient(m, dial), changed: changed, log: log}
	for _, addr := range m.Sentinels {
		f.sentinels = append(f.sentinels, newSentinelClient(addr, dial))
	}
	ctx, stop := context.WithCancel(context.Background())
	f.stop, f.done = stop, make(chan struct{})
	go f.poll(ctx)
	return f
}

// Addr asks every Sentinel at once where the master is, and returns the
// answer of the first Sentinel, in the order given, that names it:
// host:port. Asking all at once keeps a hung Sentinel from stalling the
// answer; taking them in a fixed order keeps Sentinels that disagree for a
// moment during a failover from counting as changes back and forth. Addr
// counts and logs a change from the last answer.
//
// Errors: errNoSuchMaster when no Sentinel names the master and at least one
// answered that it knows no master by that name; errNoSentinel when none
// answered before ctx ended.
func (f *failover) Addr(ctx context.Context) (string, error) {
	f.mu.Lock()
	f.asked++
	question := f.asked
	f.mu.Unlock()

	type answer struct {
		addr string
		err  error
	}
	answers := make([]answer, len(f.sentinels))
	var wg sync.WaitGroup
	for i, s := range f.sentinels {
		wg.Go(func() {
			hostPort, err := s.GetMasterAddrByName(ctx, f.master.Name).Result()
			if err == nil && len(hostPort) != 2 {
				err = fmt.Errorf("sentinel %s: get-master-addr-by-name answered %q", f.master.Sentinels[i], hostPort)
			}
			if err == nil {
				answers[i].addr = net.JoinHostPort(hostPort[0], hostPort[1])
			}
			answers[i].err = err
		})
	}
	wg.Wait()

	unknown := 0
	for _, a := range answers {
		switch {
		case a.err == nil:
			f.saw(question, a.addr)
			return a.addr, nil
		case errors.Is(a.err, redis.Nil):
			unknown++
		}
	}
	if unknown > 0 {
		return "", fmt.Errorf("%w: %d of %d Sentinels know no master named %q", errNoSuchMaster, unknown, len(answers), f.master.Name)
	}
	return "", fmt.Errorf("%w (%d asked)", errNoSentinel, len(answers))
}

// saw records the answer to question. Answers count in the order their
// questions were asked: the poll's and a probe's may cross, and an answer
// to an older question than the last one recorded is out of date.
func (f *failover) saw(question uint64, addr string) {
	f.mu.Lock()
	if question < f.lastSeen {
		f.mu.Unlock()
		return
	}
	old := f.last
	f.last, f.lastSeen = addr, question
	f.mu.Unlock()
	if old != "" && old != addr {
		f.changed()
		f.log.Warn("redis: the Sentinels name a new master; lua, naive, fenced, dedupe and redis-decr follow it",
			"master", f.master.Name, "from", old, "to", addr)
	}
}

// Ping pings the master through the failover client, which asks a
// Sentinel where it is when it has to dial.
func (f *failover) Ping(ctx context.Context) error { return f.client.Ping(ctx).Err() }

// poll asks the Sentinels at once and then every masterPollEvery until ctx
// ends. Its errors are /readyz's to report.
func (f *failover) poll(ctx context.Context) {
	defer close(f.done)
	tick := time.NewTicker(masterPollEvery)
	defer tick.Stop()
	for {
		ask, cancel := context.WithTimeout(ctx, masterPollEvery)
		_, _ = f.Addr(ask)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// close ends the poll and closes the clients. Shop.Close calls it once,
// after the lockers that use the failover client are closed.
func (f *failover) close() error {
	f.stop()
	<-f.done
	var errs []error
	for _, s := range f.sentinels {
		errs = append(errs, s.Close())
	}
	errs = append(errs, f.client.Close())
	return errors.Join(errs...)
}
