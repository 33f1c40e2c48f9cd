package waitroom

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Prefix begins the name of the channel on which the releases of a key
// are announced: Channel(key) is "dlock:released:<key>", with the
// release's id as the message: the lock's token for lua, fenced and
// redlock, and for naive the constant "1" it
// stores, the same for every release (Redlock, which counts each
// release's announcements by id, is the one that needs them told apart).
// A channel per key means a process hears only of the keys it waits for,
// and a release nobody waits for costs Redis one PUBLISH to no one.
const Prefix = "dlock:released:"

// Channel returns the channel on which key's releases are announced.
func Channel(key string) string { return Prefix + key }

// How the subscriber looks after its connections: an idle connection is
// pinged every pingEvery and replaced if the ping gets no answer; a failed
// one is retried after a backoff that doubles up to maxRetry.
const (
	pingEvery = 15 * time.Second
	minRetry  = 10 * time.Millisecond
	maxRetry  = time.Second
)

// Subscriber keeps one pub/sub connection per node of a locker, subscribed
// to the channels of the keys it is told to listen to. It connects on
// Start, reconnects with a backoff while a node is down, and stops on
// Close. It reports each announcement to onMessage, each node's confirmed
// subscription to onConfirm (announcements sent before it were not heard),
// and each node's dropped connection to onGap (announcements may have been
// lost with it), from its own goroutines: the callbacks must not block.
// Its methods are safe for concurrent use.
type Subscriber struct {
	clients   []redis.UniversalClient
	onMessage func(key, id string)
	onConfirm func(node int, key string)
	onGap     func(node int)

	startOnce sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu     sync.Mutex
	closed bool
	keys   map[string]bool // the keys to listen to
	nodes  []nodeSub
}

// nodeSub is one node's connection and the (un)subscriptions still to send
// on it, in order. Guarded by Subscriber.mu.
type nodeSub struct {
	ps   *redis.PubSub // nil while (re)connecting
	ops  []subOp
	kick chan struct{} // (buffered 1) ops were added or ps was set
}

type subOp struct {
	subscribe bool
	channel   string
}

// NewSubscriber returns a Subscriber to clients' nodes (node i is clients[i]) that
// has not connected yet.
func NewSubscriber(clients []redis.UniversalClient, onMessage func(key, id string), onConfirm func(node int, key string), onGap func(node int)) *Subscriber {
	s := &Subscriber{clients: clients, onMessage: onMessage, onConfirm: onConfirm, onGap: onGap,
		keys: map[string]bool{}, nodes: make([]nodeSub, len(clients))}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for i := range s.nodes {
		s.nodes[i].kick = make(chan struct{}, 1)
	}
	return s
}

// Start connects to every node, once; after Close it does nothing.
func (s *Subscriber) Start() {
	s.startOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		for i := range s.clients {
			s.wg.Add(2)
			go s.run(i)
			go s.send(i)
		}
	})
}

// Listen starts (Stop ends) listening to the keys' channels on every
// node. Calls take effect in the order they are made, before Start too.
func (s *Subscriber) Listen(key string)   { s.change(true, key) }
func (s *Subscriber) Stop(keys ...string) { s.change(false, keys...) }

// Listening reports whether the last of Listen and Stop for key was
// Listen.
func (s *Subscriber) Listening(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key]
}

// Clients returns the clients of the nodes, node i being the i-th.
func (s *Subscriber) Clients() []redis.UniversalClient { return s.clients }

func (s *Subscriber) change(subscribe bool, keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range keys {
		if subscribe {
			s.keys[key] = true
		} else {
			delete(s.keys, key)
		}
		for i := range s.nodes {
			s.nodes[i].ops = append(s.nodes[i].ops, subOp{subscribe, Channel(key)})
		}
	}
	for i := range s.nodes {
		kick(s.nodes[i].kick)
	}
}

// Close disconnects from every node and waits for the goroutines to end.
func (s *Subscriber) Close() {
	s.mu.Lock()
	s.closed = true
	var subs []*redis.PubSub
	for _, n := range s.nodes {
		subs = append(subs, n.ps)
	}
	s.mu.Unlock()
	s.cancel()
	for _, ps := range subs {
		if ps != nil {
			_ = ps.Close() // unblocks its Receive
		}
	}
	s.wg.Wait()
}

// send sends node i's pending (un)subscriptions, in order, on its current
// connection. If that connection fails, run replaces it with one that
// subscribes to every key listened to at that time, so nothing is lost.
func (s *Subscriber) send(i int) {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.nodes[i].kick: // the channel never changes: no lock needed
		}
		s.mu.Lock()
		ps, ops := s.nodes[i].ps, s.nodes[i].ops
		if ps != nil {
			s.nodes[i].ops = nil
		}
		s.mu.Unlock()
		for _, op := range ops {
			if ps == nil {
				break // applied by the next connection
			}
			if op.subscribe {
				_ = ps.Subscribe(s.ctx, op.channel)
			} else {
				_ = ps.Unsubscribe(s.ctx, op.channel)
			}
		}
	}
}

// run keeps node i connected until Close.
func (s *Subscriber) run(i int) {
	defer s.wg.Done()
	retry := minRetry
	for {
		if s.connect(i) {
			retry = minRetry // it worked for a while: start the backoff afresh
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(retry/2 + rand.N(retry/2)):
		}
		retry = min(2*retry, maxRetry)
	}
}

// connect opens a connection to node i, subscribed to every key listened
// to, and delivers what arrives until the connection fails or the
// subscriber closes. It reports whether the connection worked.
func (s *Subscriber) connect(i int) (worked bool) {
	s.mu.Lock()
	var channels []string
	for key := range s.keys {
		channels = append(channels, Channel(key))
	}
	s.nodes[i].ops = nil // the new connection subscribes to all of them
	s.mu.Unlock()

	ps := s.clients[i].Subscribe(s.ctx, channels...)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ps.Close()
		return false
	}
	s.nodes[i].ps = ps
	kick(s.nodes[i].kick) // (un)subscriptions made meanwhile
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.nodes[i].ps = nil
		s.mu.Unlock()
		_ = ps.Close()
		if worked {
			s.onGap(i)
		}
	}()

	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(s.ctx, pingEvery)
		var netErr net.Error
		switch {
		case s.ctx.Err() != nil:
			return worked
		case errors.As(err, &netErr) && netErr.Timeout() && !pinged:
			pinged = true // idle: make sure the connection is still alive
			if ps.Ping(s.ctx) != nil {
				return worked
			}
			continue
		case err != nil:
			return worked // go-redis would reconnect; we start over cleanly
		}
		pinged, worked = false, true
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.onConfirm(i, strings.TrimPrefix(m.Channel, Prefix))
			}
		case *redis.Message:
			s.onMessage(strings.TrimPrefix(m.Channel, Prefix), m.Payload)
		}
	}
}

// kick signals c without blocking: one pending signal is enough.
func kick(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
