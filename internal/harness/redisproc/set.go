package redisproc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/faultproxy"
)

// MasterName is the name a Set's Sentinels monitor their master under.
const MasterName = "flashsale"

// A Set's Sentinels: two of three must agree that the master is down, and
// elect one of them to promote the replica. The master counts as down after
// downAfter without an answer: 1.3 s, and a failover takes two to three
// seconds. Not less: a Sentinel pings a master it has just switched to
// only after min(downAfter, 1 s), so with downAfter at or under a second
// the first answer comes after downAfter has passed, and the new master
// counts as down at once; a Sentinel then promotes the old master, which
// has just come back empty. failoverTimeout is short because a Sentinel
// starts no failover of the same master within twice that of its last
// one. It is also how long a Sentinel leaves a replica that follows
// another address than the master's (here: the link proxy) before it
// re-points it (+fix-slave-config), counted from the INFO (every 10 s)
// that showed the change: AwaitReady points it back at the link before
// every fault, and a fault checks the replica is still behind.
// KillEvery is the shortest gap between two kills of a Set's master after
// which its Sentinels promote the replica at once: twice failoverTimeout.
// Sooner, the Sentinel that led the last failover may not lead this one,
// and a failover started by a Sentinel whose news of the last one is late
// may promote the wrong server.
const KillEvery = 2 * failoverTimeout

const (
	sentinelCount   = 3
	sentinelQuorum  = 2
	downAfter       = 1300 * time.Millisecond
	failoverTimeout = 2 * time.Second
)

// Set is a replicated Redis of this program's own: a master, one replica
// and three Sentinels that watch them, each a real process on a loopback
// port, with its configuration and log in one directory. The master and
// its replica keep an append-only file (appendfsync everysec), each in a
// folder of its own named for its port, as a Redis that holds a queue of
// accepted orders (redis-queue) must: no snapshots, and a restarted
// process loses at most the last second of writes. The replica's replication link runs through a fault proxy
// (Link): holding it stops writes from reaching the replica without
// closing anything. Its methods are safe for concurrent use, but the
// faults (KillMaster, Rejoin) are meant to be driven by one goroutine.
type Set struct {
	dir, server string
	disk        []string // every redis-server's options but its port

	mu        sync.Mutex
	master    *Process
	replica   *Process
	link      *faultproxy.Proxy // in front of master; replica follows it
	sentinels []*Process
	clients   []*redis.SentinelClient
}

// StartSet starts a master, its replica (following the master through a
// link proxy) and three Sentinels, with their files in dir, and returns
// once every Sentinel names the master and knows the replica, in sync, and
// the two other Sentinels (AwaitReady). The caller must Close the set. On
// error nothing is left running: a missing binary (ErrMissingBinaries), a
// process that did not start, or ctx's end before the Sentinels agreed.
func StartSet(ctx context.Context, dir string) (_ *Set, err error) {
	server, sentinel, err := Binaries()
	if err != nil {
		return nil, err
	}
	s := &Set{dir: dir, server: server,
		// No snapshots; the append-only file, fsynced once a second; the
		// replica's first sync is sent at once, not after the five
		// seconds a diskless sync waits for more replicas.
		disk: []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
			"--dir", dir, "--repl-diskless-sync-delay", "0"}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.master, err = Start(dir, "server1", server, 0, s.serverArgs("")); err != nil {
		return nil, err
	}
	if s.link, err = faultproxy.New(s.master.Addr); err != nil {
		return nil, err
	}
	if s.replica, err = Start(dir, "server2", server, 0, s.serverArgs(s.link.Addr())); err != nil {
		return nil, err
	}
	// A Sentinel finds replicas in the master's INFO, asked at once and
	// then every ten seconds: a replica that is in sync first is found at
	// once.
	if err := await(ctx, "the replica to be in sync", s.inSync); err != nil {
		return nil, err
	}
	mhost, mport := splitAddr(s.master.Addr)
	for i := range sentinelCount {
		name := fmt.Sprintf("sentinel%d", i+1)
		p, err := Start(dir, name, sentinel, 0, func(port int) []string {
			conf := filepath.Join(dir, name+".conf")
			// A Sentinel rewrites its configuration file: it must be its own.
			text := strings.Join([]string{
				fmt.Sprintf("port %d", port), "bind 127.0.0.1", "dir " + dir,
				fmt.Sprintf("sentinel monitor %s %s %s %d", MasterName, mhost, mport, sentinelQuorum),
				fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, downAfter.Milliseconds()),
				fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, failoverTimeout.Milliseconds()),
			}, "\n") + "\n"
			_ = os.WriteFile(conf, []byte(text), 0o600) // a failure shows as a Sentinel that does not start
			return []string{conf}
		})
		if err != nil {
			return nil, err
		}
		s.sentinels = append(s.sentinels, p)
		s.clients = append(s.clients, redis.NewSentinelClient(ClientOptions(p.Addr)))
	}
	if err := s.AwaitReady(ctx); err != nil {
		return nil, err
	}
	return s, await(ctx, "the Sentinels to know each other", s.peers)
}

// serverArgs are a redis-server's arguments, following master if given.
func (s *Set) serverArgs(master string) func(port int) []string {
	return func(port int) []string {
		args := append([]string{"--port", strconv.Itoa(port)}, s.disk...)
		args = append(args, "--appenddirname", "aof-"+strconv.Itoa(port)) // one per process
		if master != "" {
			h, p := splitAddr(master)
			args = append(args, "--replicaof", h, p)
		}
		return args
	}
}

// Sentinels returns the Sentinels' addresses.
func (s *Set) Sentinels() []string {
	var addrs []string
	for _, p := range s.sentinels {
		addrs = append(addrs, p.Addr)
	}
	return addrs
}

// Master and Replica return the processes that are master and replica
// now: they swap at every Rejoin.
func (s *Set) Master() *Process { s.mu.Lock(); defer s.mu.Unlock(); return s.master }

// Replica: see Master.
func (s *Set) Replica() *Process { s.mu.Lock(); defer s.mu.Unlock(); return s.replica }

// Link is the fault proxy in front of the master that the replica follows.
func (s *Set) Link() *faultproxy.Proxy { s.mu.Lock(); defer s.mu.Unlock(); return s.link }

// Processes returns every process the set started and still owns.
func (s *Set) Processes() []*Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Process{s.master, s.replica}, s.sentinels...)
}

// KillMaster kills the master (SIGKILL) and returns once it has exited.
// The Sentinels then promote the replica: AwaitMaster waits for that.
func (s *Set) KillMaster() { s.Master().Kill() }

// Close stops every process by its pid and the link proxy. It is safe to
// call more than once.
func (s *Set) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		c.Close()
	}
	s.clients = nil
	for _, p := range append([]*Process{s.master, s.replica}, s.sentinels...) {
		if p != nil {
			p.Stop()
		}
	}
	if s.link != nil {
		s.link.Close()
	}
}

// splitAddr splits 127.0.0.1:port.
func splitAddr(addr string) (host, port string) {
	i := strings.LastIndexByte(addr, ':')
	return addr[:i], addr[i+1:]
}
