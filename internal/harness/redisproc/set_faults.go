package redisproc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/faultproxy"
)

// AwaitReady returns once the set can fail over: the replica follows the
// link proxy (it is pointed back there if a Sentinel re-pointed it) and is
// in sync, and every Sentinel names the master and lists the replica as
// up. It returns an error
// with the last thing missing if ctx ends first.
func (s *Set) AwaitReady(ctx context.Context) error {
	if err := await(ctx, "the Sentinels to name one of the two servers", s.follow); err != nil {
		return err
	}
	if err := await(ctx, "the replica to follow the link proxy, in sync", s.inSync); err != nil {
		return err
	}
	return await(ctx, "the Sentinels to agree on the master, the replica and each other", s.agreed)
}

// follow makes the server every Sentinel names the master: when they
// promoted the replica on their own (a master they took for down while it
// was slow to answer), the replica becomes the master and the master
// follows it, through a new link proxy (inSync points it there).
func (s *Set) follow(ctx context.Context) (bool, string) {
	named := s.Named(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range named {
		if n != named[0] {
			return false, "the Sentinels disagree: " + strings.Join(named, ", ")
		}
	}
	switch named[0] {
	case s.master.Addr:
		return true, ""
	case s.replica.Addr:
		link, err := faultproxy.New(s.replica.Addr)
		if err != nil {
			return false, err.Error()
		}
		s.link.Close()
		s.master, s.replica, s.link = s.replica, s.master, link
		return true, ""
	}
	return false, "the Sentinels name " + named[0] + ", neither of the servers"
}

// inSync reports whether the replica follows the link and the master
// lists it online; a replica that follows anything else is pointed at the
// link.
func (s *Set) inSync(ctx context.Context) (bool, string) {
	s.mu.Lock()
	master, replica, link := s.master, s.replica, s.link
	s.mu.Unlock()
	r, err := info(ctx, replica.Client)
	if err != nil {
		return false, err.Error()
	}
	host, port := splitAddr(link.Addr())
	if r["master_host"] != host || r["master_port"] != port {
		err := replica.Client.Do(ctx, "REPLICAOF", host, port).Err()
		return false, fmt.Sprintf("replica followed %s:%s, pointed at the link %s (%v)", r["master_host"], r["master_port"], link.Addr(), err)
	}
	m, err := info(ctx, master.Client)
	if err != nil {
		return false, err.Error()
	}
	online := false
	for k, v := range m {
		online = online || strings.HasPrefix(k, "slave") && strings.Contains(v, "port="+strconv.Itoa(replica.Port())+",state=online")
	}
	return r["master_link_status"] == "up" && online, fmt.Sprintf("replica link %s, master lists it online: %v", r["master_link_status"], online)
}

// FollowsLink reports whether the replica replicates through the link
// proxy now: while the link is held, nothing the master writes reaches it.
// A Sentinel may have pointed it elsewhere (see failoverTimeout).
func (s *Set) FollowsLink(ctx context.Context) bool {
	s.mu.Lock()
	replica, link := s.replica, s.link
	s.mu.Unlock()
	r, err := info(ctx, replica.Client)
	if err != nil {
		return false
	}
	host, port := splitAddr(link.Addr())
	return r["master_host"] == host && r["master_port"] == port
}

// agreed reports whether every Sentinel names the master and lists the
// replica as up (not down, not disconnected).
func (s *Set) agreed(ctx context.Context) (bool, string) {
	s.mu.Lock()
	master, replica, clients := s.master.Addr, s.replica.Addr, s.clients
	s.mu.Unlock()
	for i, c := range clients {
		if got := NamedBy(ctx, c); got != master {
			return false, fmt.Sprintf("sentinel%d names master %q", i+1, got)
		}
		replicas, err := c.Replicas(ctx, MasterName).Result()
		ok := err == nil && slices.ContainsFunc(replicas, func(r map[string]string) bool {
			return r["ip"]+":"+r["port"] == replica && !strings.Contains(r["flags"], "down") && !strings.Contains(r["flags"], "disconnected")
		})
		if !ok {
			return false, fmt.Sprintf("sentinel%d knows replicas %v (%v)", i+1, replicas, err)
		}
	}
	return true, ""
}

// peers reports whether every Sentinel knows the two others: at start.
func (s *Set) peers(ctx context.Context) (bool, string) {
	for i, c := range s.clients {
		peers, err := c.Sentinels(ctx, MasterName).Result()
		if err != nil || len(peers) != sentinelCount-1 {
			return false, fmt.Sprintf("sentinel%d knows %d other Sentinels (%v)", i+1, len(peers), err)
		}
	}
	return true, ""
}

// Named returns what each Sentinel names the master now: its address, or
// the error's text in parentheses.
func (s *Set) Named(ctx context.Context) []string {
	s.mu.Lock()
	clients := s.clients
	s.mu.Unlock()
	var named []string
	for _, c := range clients {
		named = append(named, NamedBy(ctx, c))
	}
	return named
}

// AwaitMaster returns once every Sentinel names addr as the master, or an
// error saying what they named last when ctx ends first.
func (s *Set) AwaitMaster(ctx context.Context, addr string) error {
	return await(ctx, "every Sentinel to name "+addr+" the master", func(ctx context.Context) (bool, string) {
		named := s.Named(ctx)
		return !slices.ContainsFunc(named, func(n string) bool { return n != addr }), strings.Join(named, ", ")
	})
}

// Offsets returns the master's replication offset and the replica's, in
// bytes of the replication stream: the replica is master−replica bytes
// behind.
func (s *Set) Offsets(ctx context.Context) (master, replica int64, err error) {
	m, err := info(ctx, s.Master().Client)
	if err != nil {
		return 0, 0, fmt.Errorf("redisproc: master: %w", err)
	}
	r, err := info(ctx, s.Replica().Client)
	if err != nil {
		return 0, 0, fmt.Errorf("redisproc: replica: %w", err)
	}
	master, _ = strconv.ParseInt(m["master_repl_offset"], 10, 64)
	replica, _ = strconv.ParseInt(r["slave_repl_offset"], 10, 64)
	return master, replica, nil
}

// Rejoin brings a killed master back as the replica of the one
// the Sentinels promoted: it restarts the process on its old port (where
// the Sentinels still know it, as a replica since the promotion),
// following a new link proxy in front of the new master, and returns once
// AwaitReady does; whatever its append-only file held, its first sync
// with the new master replaces. The caller must have waited for the
// promotion (AwaitMaster). On error the set is as far as it got: Close still stops
// everything.
func (s *Set) Rejoin(ctx context.Context) error {
	s.mu.Lock()
	old, promoted := s.master, s.replica
	s.mu.Unlock()
	link, err := faultproxy.New(promoted.Addr)
	if err != nil {
		return err
	}
	back, err := Start(s.dir, old.Name, s.server, old.Port(), s.serverArgs(link.Addr()))
	if err != nil {
		link.Close()
		return err
	}
	s.mu.Lock()
	oldLink := s.link
	s.master, s.replica, s.link = promoted, back, link
	s.mu.Unlock()
	old.Client.Close()
	oldLink.Close()
	return s.AwaitReady(ctx)
}

// NamedBy asks one Sentinel for the master's address; on error it returns
// the error's text in parentheses.
func NamedBy(ctx context.Context, c *redis.SentinelClient) string {
	hostPort, err := c.GetMasterAddrByName(ctx, MasterName).Result()
	if err != nil || len(hostPort) != 2 {
		return fmt.Sprintf("(%v %q)", err, hostPort)
	}
	return hostPort[0] + ":" + hostPort[1]
}

// info reads INFO replication as key → value.
func info(ctx context.Context, c *redis.Client) (map[string]string, error) {
	text, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out, nil
}

// await asks cond every 20 ms until it holds, and returns an error with
// cond's last status if ctx ends first.
func await(ctx context.Context, what string, cond func(context.Context) (bool, string)) error {
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		ok, status := cond(cctx)
		cancel()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisproc: waiting for %s: %w; last: %s", what, ctx.Err(), status)
		case <-time.After(20 * time.Millisecond): // the condition is the processes' state
		}
	}
}
