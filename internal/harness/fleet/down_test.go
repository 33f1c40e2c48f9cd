package fleet

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/harness/redisproc"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
)

// answers reports whether a Redis server answers PING at addr within a
// short wait.
func answers(addr string) bool {
	c := NodeClient(addr, 200*time.Millisecond)
	defer c.Close()
	return c.Ping(context.Background()).Err() == nil
}

// Embedded nodes a kill takes down refuse connections until they are
// brought back on the same address; the others never stop. A node that
// is not there is an error, and nothing goes down.
func TestStoppedNodes(t *testing.T) {
	r, err := embedded.StartRedis(RedisNodes)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	k := &stoppedNodes{r: r}
	addrs := r.Addrs()
	if _, err := k.Kill(t.Context(), []int{0, 5}, time.Second); err == nil || !answers(addrs[0]) {
		t.Fatalf("Kill of node 6 of 5: %v, node 1 answers %v; want an error, nothing down", err, answers(addrs[0]))
	}
	restore, err := k.Kill(t.Context(), []int{0, 1}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if answers(addrs[0]) || answers(addrs[1]) || !answers(addrs[2]) {
		t.Fatalf("after the kill: nodes answer %v %v %v; want 1 and 2 down, 3 up", answers(addrs[0]), answers(addrs[1]), answers(addrs[2]))
	}
	if err := restore(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, a := range r.Addrs() {
		if a != addrs[i] || !answers(a) {
			t.Errorf("node %d after the restore: %s answers %v, want %s", i+1, a, answers(a), addrs[i])
		}
	}
}

// Embedded etcd members a kill stops refuse connections while the others
// keep the cluster's quorum; they come back with their data.
func TestStoppedMembers(t *testing.T) {
	e, err := embedded.StartEtcd(EtcdMembers)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	k := &stoppedMembers{e: e}
	if _, err := k.Kill(t.Context(), []int{3}, time.Second); err == nil {
		t.Error("Kill of member 4 of 3: no error")
	}
	endpoint := strings.TrimPrefix(e.Endpoints()[0], "http://")
	restore, err := k.Kill(t.Context(), []int{0}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
		c.Close()
		t.Error("member 1 accepts connections while down")
	}
	if err := restore(t.Context()); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", endpoint, time.Second)
	if err != nil {
		t.Fatalf("member 1 after the restore: %v", err)
	}
	c.Close()
	if !strings.Contains(k.Describe(), "etcd members stopped") {
		t.Errorf("Describe = %q", k.Describe())
	}
}

// ownServer is a redis-server of the test's own, for the faults that touch
// a whole server (CLIENT PAUSE, CLIENT KILL): the shared real servers must
// not be paused under other tests. It skips without the binary.
func ownServer(t *testing.T) string {
	t.Helper()
	server, _, err := redisproc.Binaries()
	if err != nil && os.Getenv(testenv.EnvRequireSentinel) != "1" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := redisproc.Start(dir, "server", server, 0, func(port int) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p.Addr
}

// A real node paused by a kill answers nobody until the pause ends by
// itself; the restore waits for that and finds it answering.
func TestPausedNodes(t *testing.T) {
	addr := ownServer(t)
	k := &pausedNodes{addrs: []string{addr}}
	if _, err := k.Kill(t.Context(), []int{1}, time.Second); err == nil {
		t.Error("Kill of node 2 of 1: no error")
	}
	start := time.Now()
	restore, err := k.Kill(t.Context(), []int{0}, 400*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if answers(addr) {
		t.Error("the node answers while paused")
	}
	if err := restore(t.Context()); err != nil || time.Since(start) < 400*time.Millisecond || !answers(addr) {
		t.Errorf("restore = %v after %v, answers %v; want the node back after the pause", err, time.Since(start), answers(addr))
	}
	ctx, cancel := context.WithCancel(t.Context())
	restore, _ = k.Kill(ctx, []int{0}, time.Minute)
	cancel()
	if err := restore(ctx); err == nil {
		t.Error("restore on an ended context: no error")
	}
	if !strings.Contains(k.Describe(), "resume by themselves") || !strings.Contains((&stoppedNodes{}).Describe(), "restarted on the same port") {
		t.Error("Describe")
	}
}

// A node that does not answer once its pause is over is the restore's
// error, named.
func TestPausedNodeNotBack(t *testing.T) {
	addr := ownServer(t)
	k := &pausedNodes{addrs: []string{addr}}
	restore, err := k.Kill(t.Context(), []int{0}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := NodeClient(addr, time.Second)
	defer c.Close()
	c.Do(t.Context(), "SHUTDOWN", "NOSAVE") // queued behind the pause: the node goes away when it ends
	if err := restore(t.Context()); err == nil || !strings.Contains(err.Error(), "redis node 1 at "+addr+" after the pause") {
		t.Errorf("restore of a node that died: %v, want it named", err)
	}
}

// An external node restarted drops every client, the fleet's and anyone
// else's, and the product's keys, and keeps every other key; for the
// delay it answers nobody.
func TestDroppedClients(t *testing.T) {
	addr := ownServer(t)
	ctx := t.Context()
	keep := NodeClient(addr, time.Second)
	defer keep.Close()
	product := "p{1}*" // glob characters in an id match only themselves
	for _, k := range []string{order.ProductKey(product), "flashsale:stock:{" + product + "}", "flashsale:stock:{p{1}x}", "other"} {
		keep.Set(ctx, k, "v", 0)
	}
	sub := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer sub.Close()
	ps := sub.Subscribe(ctx, "ch")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	d := &droppedClients{addrs: []string{addr}}
	start := time.Now()
	if err := d.Restart(ctx, []int{0}, 300*time.Millisecond, product); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("Restart returned after %v, before its 300ms delay", took)
	}
	if msg, err := ps.Receive(ctx); err == nil {
		t.Errorf("the subscriber got %v, want its connection dropped", msg)
	}
	for k, want := range map[string]int64{order.ProductKey(product): 0, "flashsale:stock:{" + product + "}": 0, "flashsale:stock:{p{1}x}": 1, "other": 1} {
		if n, err := keep.Exists(ctx, k).Result(); err != nil || n != want {
			t.Errorf("%s exists %d (%v), want %d", k, n, err, want)
		}
	}
	if err := d.Restart(ctx, []int{1}, 0, product); err == nil {
		t.Error("Restart of node 2 of 1: no error")
	}
	start = time.Now()
	if err := d.Restart(ctx, []int{0}, 0, product); err != nil || time.Since(start) > 250*time.Millisecond {
		t.Errorf("a restart without a delay: %v after %v, want the node back at once", err, time.Since(start))
	}
}

// Members stopped together come back together: a majority down, the
// cluster has no quorum until both are back, and then takes writes.
func TestStoppedMembersMajority(t *testing.T) {
	testenv.SkipShort(t, "stops two of three etcd members")
	e, err := embedded.StartEtcd(EtcdMembers)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	restore, err := (&stoppedMembers{e: e}).Kill(t.Context(), []int{0, 1}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints(), DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	short, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if _, err := c.Put(short, "k", "down"); err == nil {
		t.Error("a write with two of three members down: no error")
	}
	if err := restore(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	if _, err := c.Put(ctx, "k", "back"); err != nil {
		t.Errorf("a write after both members are back: %v", err)
	}
}

// The fleet's own clients give up at their timeout, once: a node that
// stops answering is seen at once, not waited for.
func TestNodeClientGivesUp(t *testing.T) {
	addr := ownServer(t)
	paused := &pausedNodes{addrs: []string{addr, "127.0.0.1:1"}}
	// Paused for longer than a loaded machine may take to reach the PING
	// below; the test never waits for the pause to end.
	if _, err := paused.Kill(t.Context(), []int{0, 1}, 5*time.Second); err == nil || !strings.Contains(err.Error(), "redis node 2 at 127.0.0.1:1") {
		t.Fatalf("Kill with node 2 unreachable: %v, want it named", err)
	}
	c := NodeClient(addr, 100*time.Millisecond)
	defer c.Close()
	start := time.Now()
	if err := c.Ping(t.Context()).Err(); err == nil {
		t.Error("PING of a paused node: no error")
	}
	if took := time.Since(start); took > 400*time.Millisecond {
		t.Errorf("PING of a paused node took %v, want its 100ms timeout, once", took)
	}
}
