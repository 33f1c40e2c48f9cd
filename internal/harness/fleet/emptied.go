package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/embedded"
	"github.com/flashsale/flashsale/internal/faultproxy"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// The three ways --redis-restart restarts a node empty, one per kind of
// fleet. A restart is two things on the wire: every connection to the node
// drops, and the node answers again knowing nothing.

// crashedNodes restarts embedded nodes: embedded.Redis.Crash closes the
// server (connections dropped, new ones refused) and Restart brings back a
// new, empty one on the same port.
type crashedNodes struct{ r *embedded.Redis }

// Describe implements NodeRestarter.
func (c *crashedNodes) Describe() string {
	return "embedded nodes closed (every connection dropped, new ones refused) and replaced on the same port by empty servers after --restart-delay"
}

// Restart implements NodeRestarter.
func (c *crashedNodes) Restart(ctx context.Context, nodes []int, delay time.Duration, _ string) error {
	if err := checkNodes(nodes, c.r.Len()); err != nil {
		return err
	}
	for _, i := range nodes {
		c.r.Crash(i)
	}
	pause(ctx, delay)
	var errs []error
	for _, i := range nodes {
		errs = append(errs, c.r.Restart(i))
	}
	return errors.Join(errs...)
}

// proxyNodes puts a proxy in front of each of the nodes at addrs.
func proxyNodes(addrs []string) (*proxiedNodes, error) {
	p := &proxiedNodes{addrs: addrs}
	for _, a := range addrs {
		px, err := faultproxy.New(a)
		if err != nil {
			p.close()
			return nil, err
		}
		p.proxies = append(p.proxies, px)
	}
	return p, nil
}

// proxiedNodes restarts real nodes that the fleet's own shops reach
// through the fleet's proxies (StartFleet puts them there for
// --redis-restart): the proxy drops every connection of the shops and
// refuses new ones, and the product's keys are deleted from the node
// itself. The nodes are never flushed and nobody else's connections are
// touched: they may serve others.
type proxiedNodes struct {
	proxies []*faultproxy.Proxy
	addrs   []string // the nodes' own addresses, behind the proxies
}

// Describe implements NodeRestarter.
func (p *proxiedNodes) Describe() string {
	return "--redis nodes behind the load generator's own proxies: the proxy dropped every connection of the shops and refused new ones for --restart-delay, and the product's keys (*{product}*) were deleted from the node (no FLUSHALL: the nodes may serve others)"
}

// proxyAddrs are the proxies' addresses, in node order: the shops dial
// them.
func (p *proxiedNodes) proxyAddrs() []string {
	out := make([]string, len(p.proxies))
	for i, px := range p.proxies {
		out[i] = px.Addr()
	}
	return out
}

// close stops the proxies.
func (p *proxiedNodes) close() {
	for _, px := range p.proxies {
		px.Close()
	}
}

// Restart implements NodeRestarter.
func (p *proxiedNodes) Restart(ctx context.Context, nodes []int, delay time.Duration, product string) error {
	if err := checkNodes(nodes, len(p.proxies)); err != nil {
		return err
	}
	for _, i := range nodes {
		p.proxies[i].Stop()
	}
	var errs []error
	for _, i := range nodes { // nothing of the shops reaches the node now
		errs = append(errs, withClient(p.addrs[i], func(c *redis.Client) error {
			keys, err := productKeys(ctx, c, product)
			if err == nil && len(keys) > 0 {
				err = c.Del(ctx, keys...).Err()
			}
			return err
		}))
	}
	pause(ctx, delay)
	for _, i := range nodes {
		errs = append(errs, p.proxies[i].Start())
	}
	return wrapNodes(errors.Join(errs...))
}

// droppedClients restarts the nodes of an external fleet, whose processes
// the load generator cannot restart: in one MULTI it deletes the
// product's keys and drops every client connection of the node (CLIENT
// KILL TYPE normal, then pubsub; not its own, SKIPME is the default), and
// for a delay pauses it (CLIENT PAUSE <ms> ALL, which ends by itself, as
// pausedNodes says). It touches every client of the node, the fleet's and
// anyone else's, as a restart would; it deletes only the product's keys.
type droppedClients struct{ addrs []string }

// Describe implements NodeRestarter.
func (d *droppedClients) Describe() string {
	return "external --redis nodes: in one MULTI, the product's keys (*{product}*) deleted, every client connection dropped (CLIENT KILL TYPE normal, CLIENT KILL TYPE pubsub) and, for --restart-delay, CLIENT PAUSE <ms> ALL (no FLUSHALL)"
}

// Restart implements NodeRestarter.
func (d *droppedClients) Restart(ctx context.Context, nodes []int, delay time.Duration, product string) error {
	if err := checkNodes(nodes, len(d.addrs)); err != nil {
		return err
	}
	until := time.Now().Add(delay)
	var errs []error
	for _, i := range nodes {
		errs = append(errs, withClient(d.addrs[i], func(c *redis.Client) error {
			keys, err := productKeys(ctx, c, product)
			if err != nil {
				return err
			}
			_, err = c.TxPipelined(ctx, func(tx redis.Pipeliner) error {
				tx.Del(ctx, keys...)
				tx.Do(ctx, "CLIENT", "KILL", "TYPE", "normal")
				tx.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub")
				if delay > 0 {
					tx.Do(ctx, "CLIENT", "PAUSE", max(delay.Milliseconds(), 1), "ALL")
				}
				return nil
			})
			return err
		}))
	}
	pause(ctx, time.Until(until))
	for _, i := range nodes {
		errs = append(errs, withClient(d.addrs[i], func(c *redis.Client) error { return c.Ping(ctx).Err() }))
	}
	return wrapNodes(errors.Join(errs...))
}

// productKeys lists product's keys on a node with SCAN (never KEYS, which
// blocks a server others may use): every key that holds its {id} hash tag,
// and the lock and its fence counter by name, in case SCAN missed one that
// appeared meanwhile.
func productKeys(ctx context.Context, c *redis.Client, product string) ([]string, error) {
	seen := map[string]bool{order.ProductKey(product): true, order.ProductKey(product) + ":fence": true}
	keys := []string{order.ProductKey(product), order.ProductKey(product) + ":fence"}
	iter := c.Scan(ctx, 0, "*{"+globEscape(product)+"}*", 1000).Iterator()
	for iter.Next(ctx) {
		if k := iter.Val(); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, iter.Err()
}

// globEscape escapes the characters Redis's glob patterns give a meaning.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}

// withClient runs f with a client of its own to the node at addr, naming
// the node in its error.
func withClient(addr string, f func(*redis.Client) error) error {
	c := NodeClient(addr, 3*time.Second)
	defer c.Close()
	if err := f(c); err != nil {
		return fmt.Errorf("redis node %s: %w", addr, err)
	}
	return nil
}

// NodeClient is a client of the load generator's own to one node, whose
// calls fail after timeout and are never resent.
func NodeClient(addr string, timeout time.Duration) *redis.Client {
	return redis.NewClient(redisopt.Client(addr, redisopt.Settings{
		PoolSize: 2, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
	}))
}

// checkNodes says which node index is out of range, if one is.
func checkNodes(nodes []int, n int) error {
	for _, i := range nodes {
		if i < 0 || i >= n {
			return fmt.Errorf("fleet: redis node %d: only %d nodes", i+1, n)
		}
	}
	return nil
}

// wrapNodes prefixes a restart's errors with the package's name.
func wrapNodes(err error) error {
	if err != nil {
		return fmt.Errorf("fleet: restarting redis nodes: %w", err)
	}
	return nil
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
