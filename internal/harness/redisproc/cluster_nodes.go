package redisproc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Cluster's topology as its nodes see it (CLUSTER NODES, CLUSTER INFO),
// and the faults a failover needs: kill a master, bring it back, and have a
// master announce another port (a fault proxy's) to its replica.

// Shard is one master of a cluster and its replicas, as the nodes see them.
type Shard struct {
	Master   *Process
	Replicas []*Process
}

// nodeLine is one line of CLUSTER NODES: "<id> <ip:port@cport> <flags>
// <master id or -> <ping> <pong> <epoch> <link> <slot ranges...>".
type nodeLine struct {
	id, master string
	flags      []string
	ranges     []string // the slot ranges it serves: "0-5460", "5461", ...
}

func parseNodes(text string) []nodeLine {
	var out []nodeLine
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		out = append(out, nodeLine{id: f[0], flags: strings.Split(f[2], ","), master: f[3], ranges: f[8:]})
	}
	return out
}

func (l nodeLine) is(flag string) bool { return slices.Contains(l.flags, flag) }

// serves reports whether the node serves slot.
func (l nodeLine) serves(slot int64) bool {
	for _, r := range l.ranges {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 == nil && err2 == nil && a <= slot && slot <= b {
			return true
		}
	}
	return false
}

// AwaitHealthy returns once every node that runs says cluster_state:ok,
// knows every node, flags none as failing and sees the same masters serve
// slots, each with its replica in sync; or an error with the last thing
// missing when ctx ends first.
func (c *Cluster) AwaitHealthy(ctx context.Context) error {
	return await(ctx, "the cluster to be healthy", c.healthy)
}

func (c *Cluster) healthy(ctx context.Context) (bool, string) {
	var masters string
	for _, p := range c.Processes() {
		if state := clusterInfo(ctx, p)["cluster_state"]; state != "ok" {
			return false, fmt.Sprintf("%s: cluster_state %q", p.Addr, state)
		}
		lines, err := nodesSeenBy(ctx, p)
		if err != nil {
			return false, err.Error()
		}
		var ids []string
		replicas := 0
		for _, l := range lines {
			if l.is("fail") || l.is("fail?") || l.is("handshake") || l.is("noaddr") {
				return false, fmt.Sprintf("%s sees %s as %v", p.Addr, l.id, l.flags)
			}
			switch {
			case l.is("master") && len(l.ranges) > 0:
				ids = append(ids, l.id)
			case l.is("slave"):
				replicas++
			}
		}
		slices.Sort(ids)
		if len(lines) != ClusterNodes || len(ids) != ClusterMasters || replicas != ClusterNodes-ClusterMasters {
			return false, fmt.Sprintf("%s knows %d nodes, %d masters with slots, %d replicas", p.Addr, len(lines), len(ids), replicas)
		}
		if seen := strings.Join(ids, ","); masters == "" {
			masters = seen
		} else if seen != masters {
			return false, fmt.Sprintf("%s sees other masters than %s", p.Addr, c.Addrs()[0])
		}
		if r, err := info(ctx, p.Client); err != nil || r["role"] == "slave" && r["master_link_status"] != "up" {
			return false, fmt.Sprintf("%s: replication %v %q", p.Addr, err, r["master_link_status"])
		}
	}
	return true, ""
}

// SlotShard returns the master that serves key's slot, as the first node
// that answers sees it, and that master's replicas.
func (c *Cluster) SlotShard(ctx context.Context, key string) (Shard, error) {
	var last error
	for _, p := range c.Processes() {
		slot, err := p.Client.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			last = err
			continue
		}
		lines, err := nodesSeenBy(ctx, p)
		if err != nil {
			last = err
			continue
		}
		i := slices.IndexFunc(lines, func(l nodeLine) bool { return l.is("master") && l.serves(slot) })
		if i < 0 {
			return Shard{}, fmt.Errorf("redisproc: %s: no master serves slot %d", p.Addr, slot)
		}
		sh := Shard{Master: c.byID(lines[i].id)}
		if sh.Master == nil {
			return Shard{}, fmt.Errorf("redisproc: slot %d is served by %s, not a node of this cluster", slot, lines[i].id)
		}
		for _, l := range lines {
			if rp := c.byID(l.id); l.master == lines[i].id && rp != nil {
				sh.Replicas = append(sh.Replicas, rp)
			}
		}
		return sh, nil
	}
	return Shard{}, fmt.Errorf("redisproc: no node answers: %w", last)
}

// AwaitMaster returns once every node that runs lists p as a master
// serving slots and says cluster_state:ok: the cluster has promoted p.
func (c *Cluster) AwaitMaster(ctx context.Context, p *Process) error {
	id := c.idOf(p)
	return await(ctx, "the cluster to promote "+p.Addr, func(ctx context.Context) (bool, string) {
		for _, q := range c.Processes() {
			if q == p || !q.running() {
				continue
			}
			lines, err := nodesSeenBy(ctx, q)
			if err != nil {
				return false, err.Error()
			}
			i := slices.IndexFunc(lines, func(l nodeLine) bool { return l.id == id })
			if i < 0 || !lines[i].is("master") || len(lines[i].ranges) == 0 {
				return false, fmt.Sprintf("%s does not list %s as a master with slots yet", q.Addr, p.Addr)
			}
			if state := clusterInfo(ctx, q)["cluster_state"]; state != "ok" {
				return false, fmt.Sprintf("%s: cluster_state %q", q.Addr, state)
			}
		}
		return true, ""
	})
}

// Kill kills p (SIGKILL) and returns once it has exited. The other
// masters count it as failing after ClusterConfig.NodeTimeout, and its
// replica is elected in its place: AwaitMaster waits for that.
func (c *Cluster) Kill(p *Process) { p.Kill() }

// Rejoin starts a killed node again on its port, with its nodes file: it
// learns that its replica took its slots and becomes that replica's
// replica, syncing from it whatever its append-only file held. It returns
// once the cluster is healthy again (AwaitHealthy).
func (c *Cluster) Rejoin(ctx context.Context, p *Process) error {
	c.mu.Lock()
	i := slices.IndexFunc(c.nodes, func(n *clusterNode) bool { return n.proc == p })
	c.mu.Unlock()
	if i < 0 {
		return fmt.Errorf("redisproc: %s is not a node of this cluster", p.Addr)
	}
	n := c.nodes[i]
	back, err := c.startNode(p.Name, n)
	if err != nil {
		return err
	}
	c.mu.Lock()
	n.proc = back
	c.mu.Unlock()
	p.Client.Close()
	return c.AwaitHealthy(ctx)
}

// Announce has p announce port as its client port (0: its own again), its
// bus port unchanged. Its replicas then replicate from that port, and
// clients that ask the cluster where its slots are are sent there: a fault
// proxy in front of p takes its replication link (and those clients) this
// way, since a node in cluster mode refuses REPLICAOF.
func (c *Cluster) Announce(ctx context.Context, p *Process, port int) error {
	bus := 0
	if port > 0 {
		c.mu.Lock()
		for _, n := range c.nodes {
			if n.proc == p {
				bus = n.bus
			}
		}
		c.mu.Unlock()
	}
	err := p.Client.ConfigSet(ctx, "cluster-announce-bus-port", strconv.Itoa(bus)).Err()
	if err == nil {
		err = p.Client.ConfigSet(ctx, "cluster-announce-port", strconv.Itoa(port)).Err()
	}
	if err != nil {
		return fmt.Errorf("redisproc: %s: announce port %d: %w", p.Addr, port, err)
	}
	return nil
}

// Follows reports whether replica replicates from port now, with its link
// up.
func (c *Cluster) Follows(ctx context.Context, replica *Process, port int) bool {
	r, err := info(ctx, replica.Client)
	return err == nil && r["master_port"] == strconv.Itoa(port) && r["master_link_status"] == "up"
}

// Offsets returns master's replication offset and replica's, in bytes of
// the replication stream: the replica is master−replica bytes behind.
func (c *Cluster) Offsets(ctx context.Context, master, replica *Process) (m, r int64, err error) {
	mi, err := info(ctx, master.Client)
	if err != nil {
		return 0, 0, fmt.Errorf("redisproc: master %s: %w", master.Addr, err)
	}
	ri, err := info(ctx, replica.Client)
	if err != nil {
		return 0, 0, fmt.Errorf("redisproc: replica %s: %w", replica.Addr, err)
	}
	m, _ = strconv.ParseInt(mi["master_repl_offset"], 10, 64)
	r, _ = strconv.ParseInt(ri["slave_repl_offset"], 10, 64)
	return m, r, nil
}

func (c *Cluster) byID(id string) *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.id == id {
			return n.proc
		}
	}
	return nil
}

func (c *Cluster) idOf(p *Process) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.proc == p {
			return n.id
		}
	}
	return ""
}

// running reports whether the process has not exited.
func (p *Process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// nodesSeenBy reads CLUSTER NODES on p.
func nodesSeenBy(ctx context.Context, p *Process) ([]nodeLine, error) {
	text, err := p.Client.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: cluster nodes: %w", p.Addr, err)
	}
	return parseNodes(text), nil
}

// clusterInfo reads CLUSTER INFO on p as key → value; empty on error.
func clusterInfo(ctx context.Context, p *Process) map[string]string {
	out := map[string]string{}
	text, err := p.Client.ClusterInfo(ctx).Result()
	if err != nil {
		return out
	}
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}
