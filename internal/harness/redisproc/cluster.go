package redisproc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/porthold"
)

// A Redis Cluster of this program's own: ClusterNodes redis-server
// processes in cluster mode, joined by redis-cli into ClusterMasters
// masters with one replica each. This file starts and stops it;
// cluster_nodes.go reads its topology and drives its faults.

// ClusterNodes and ClusterMasters are a Cluster's shape: three masters, the
// fewest that still elect a replica when one of them dies (the two others
// are a majority), and a replica each.
const (
	ClusterNodes   = 6
	ClusterMasters = 3
)

// DefaultNodeTimeout is ClusterConfig.NodeTimeout when zero: how long a
// node may not answer before the others count it as failing. A failover
// takes about this long and one or two seconds more. Long enough that a
// node starved of CPU under a busy test run is not failed over by mistake.
const DefaultNodeTimeout = 3 * time.Second

// ErrMissingClusterBinaries is wrapped by StartCluster's error when
// redis-server or redis-cli is not on the PATH.
var ErrMissingClusterBinaries = errors.New("redisproc: redis-server and redis-cli are needed on the PATH")

// ClusterConfig says how StartCluster starts a cluster.
type ClusterConfig struct {
	// Dir holds every node's configuration file (nodes-<port>.conf),
	// append-only file and log. The caller creates and removes it.
	Dir string
	// FirstPort, if above zero, puts the nodes on FirstPort ..
	// FirstPort+5, their cluster bus ports 10000 above; zero picks free
	// loopback ports for both.
	FirstPort int
	// NodeTimeout is cluster-node-timeout; zero means DefaultNodeTimeout.
	NodeTimeout time.Duration
	// Detach starts every node in a process group of its own, so that it
	// outlives this process and a Ctrl-C to its terminal: for a command
	// that starts a cluster and exits (rediscluster). Its pid is then the
	// way to stop it.
	Detach bool
}

// Cluster is a Redis Cluster of real processes on loopback. Each node's
// Process.Client reads on a replica too (READONLY). Like a Set's
// servers, every node keeps an append-only file (appendfsync everysec) and
// no snapshots: a redis-queue stream lives on it. Its methods are safe for
// concurrent use; its faults (Kill, Rejoin, Announce) are meant to be
// driven by one goroutine.
type Cluster struct {
	cfg    ClusterConfig
	server string

	mu    sync.Mutex
	nodes []*clusterNode // in the order they were started
}

// clusterNode is one node: its process (replaced by Rejoin), its ports and
// its cluster id, which stays across restarts (its nodes file keeps it).
type clusterNode struct {
	proc *Process
	port int
	bus  int
	id   string
}

// StartCluster starts ClusterNodes redis-server processes in cluster mode,
// joins them with redis-cli --cluster create (three masters, a replica
// each) and returns once every node says cluster_state:ok, every node sees
// the same three masters, and every replica is in sync (AwaitHealthy).
// On error nothing is left running: a missing binary
// (ErrMissingClusterBinaries), a process that did not start, redis-cli's
// failure, or ctx's end before the cluster was whole. The caller must
// Close the cluster.
func StartCluster(ctx context.Context, cfg ClusterConfig) (_ *Cluster, err error) {
	server, cli, err := clusterBinaries()
	if err != nil {
		return nil, err
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = DefaultNodeTimeout
	}
	c := &Cluster{cfg: cfg, server: server}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	// Every node is made before any starts, so that Close meets no node
	// half made. Without FirstPort, each start chooses its node's ports.
	nodes := make([]*clusterNode, ClusterNodes)
	for i := range nodes {
		nodes[i] = &clusterNode{}
		if cfg.FirstPort > 0 {
			nodes[i].port, nodes[i].bus = cfg.FirstPort+i, cfg.FirstPort+i+10000
		}
	}
	c.nodes = nodes
	// The nodes start at once, each on its own goroutine: a second saved.
	errs := make([]error, ClusterNodes)
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { n.proc, errs[i] = c.startNode(fmt.Sprintf("cluster%d", i+1), n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redisproc: redis-cli --cluster create: %v: %s", err, lastLines(string(out), 10))
	}
	for _, n := range c.nodes {
		if n.id, err = n.proc.Client.ClusterMyID(ctx).Result(); err != nil {
			return nil, fmt.Errorf("redisproc: cluster myid of %s: %w", n.proc.Addr, err)
		}
	}
	return c, c.AwaitHealthy(ctx)
}

// clusterBinaries returns the paths of redis-server and redis-cli.
func clusterBinaries() (server, cli string, err error) {
	var missing []string
	if server, err = exec.LookPath("redis-server"); err != nil {
		missing = append(missing, "redis-server")
	}
	if cli, err = exec.LookPath("redis-cli"); err != nil {
		missing = append(missing, "redis-cli")
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("%w: %s missing (Debian: apt-get install redis-server, which brings redis-tools)",
			ErrMissingClusterBinaries, strings.Join(missing, " and "))
	}
	return server, cli, nil
}

// startNode starts n's process, its log name.log, on n.port and its bus on
// n.bus (free ports, chosen for each try, if zero; it then records them).
func (c *Cluster) startNode(name string, n *clusterNode) (*Process, error) {
	bus := n.bus
	args := func(port int) []string {
		if n.bus == 0 {
			// Chosen afresh for each try, as the port is: another process
			// (another node) may take a free port before the bind. Two are
			// picked so the bus is never port itself (free again until
			// redis-server binds it). 0 if none is free: Redis then listens
			// on port + 10000.
			bus = 0
			if free, err := porthold.Free(2); err == nil {
				bus = free[0]
				if bus == port {
					bus = free[1]
				}
			}
		}
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", "nodes-" + strconv.Itoa(port) + ".conf",
			"--cluster-node-timeout", strconv.FormatInt(c.cfg.NodeTimeout.Milliseconds(), 10),
			"--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
			"--appenddirname", "aof-" + strconv.Itoa(port), "--dir", c.cfg.Dir,
			"--repl-diskless-sync-delay", "0", "--maxmemory-policy", "noeviction"}
	}
	p, err := start(c.cfg.Dir, name, c.server, n.port, args, c.cfg.Detach)
	if err != nil {
		return nil, err
	}
	n.port = p.Port()
	if n.bus = bus; bus == 0 {
		n.bus = n.port + 10000
	}
	// A replica in cluster mode answers a read with MOVED to its master
	// unless the connection said READONLY: the faults read what a
	// replica holds.
	opts := ClientOptions(p.Addr)
	opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }
	p.Client.Close()
	p.Client = redis.NewClient(opts)
	return p, nil
}

// Addrs returns every node's address, in the order they were started.
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.nodes {
		if n.proc != nil {
			out = append(out, n.proc.Addr)
		}
	}
	return out
}

// Pids returns every node's process id, in the order of Addrs.
func (c *Cluster) Pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, n := range c.nodes {
		if n.proc != nil {
			out = append(out, n.proc.Pid())
		}
	}
	return out
}

// Processes returns every node's process, in the order of Addrs.
func (c *Cluster) Processes() []*Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Process
	for _, n := range c.nodes {
		if n.proc != nil {
			out = append(out, n.proc)
		}
	}
	return out
}

// Close stops every node by its pid (SIGTERM, then SIGKILL). It is safe to
// call more than once. The files stay in ClusterConfig.Dir.
func (c *Cluster) Close() {
	var wg sync.WaitGroup
	for _, p := range c.Processes() {
		wg.Go(p.Stop)
	}
	wg.Wait()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
