package redisqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// The consumers a shop runs (consumer.go says what each does): their
// options, one per product asked for, started by KeepConsuming and
// stopped by Close or once idle, and the problem the readiness probe reports.

// ConsumerOptions tune Consumers. The zero value is ready to use.
type ConsumerOptions struct {
	// Name is this process's consumer name in every group; it must be
	// unique among the processes sharing Redis. Empty: host, pid and a
	// random suffix.
	Name string
	// BatchMax is the most entries written in one transaction; zero
	// means DefaultBatchMax.
	BatchMax int
	// ClaimIdle is how long an entry waits for its consumer's
	// acknowledgement before another consumer claims it; zero means
	// DefaultClaimIdle.
	ClaimIdle time.Duration
	// Linger is how long a consumer with nothing to write keeps going
	// after its product was last asked for (KeepConsuming); zero means DefaultLinger. A
	// consumer never stops while its product's stream has entries.
	Linger time.Duration
	// Writers is how many batches of one product this process writes at once;
	// zero means DefaultWriters. While one holds the product's row, another is
	// read or acknowledged in Redis.
	Writers int
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
	// Observe, if set, is told of each batch: orders written and refused.
	Observe func(product string, written, refused int)
}

// Defaults of ConsumerOptions.
const (
	DefaultBatchMax  = 256
	DefaultWriters   = 2
	DefaultClaimIdle = 3 * time.Second
	DefaultLinger    = 30 * time.Second
)

// Timing of a consumer's loop.
const (
	claimEvery   = time.Second            // how often it looks for entries to claim
	pollEvery    = time.Second            // how often it reads when nobody rings (bell.go)
	writeTimeout = 10 * time.Second       // bounds one batch's transaction
	ackTimeout   = 2 * time.Second        // bounds the acknowledgement after the commit
	retryPause   = 500 * time.Millisecond // after a failed read or write
)

// Consumers runs this process's consumers, one goroutine per product
// asked for. Its methods are safe for concurrent use.
type Consumers struct {
	q    *Queue
	w    Writer
	opts ConsumerOptions

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	unring func() // stops q's accepts ringing these consumers (bell.go)
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]*consumer // product -> its consumer
	closed  bool
}

// consumer is one product's consumer in this process.
type consumer struct {
	product string
	// wanted is when the product was last asked for, failed when a write
	// last failed and why (zero: the last write worked); under
	// Consumers.mu.
	wanted time.Time
	failed time.Time
	why    string
	// inFlight is the entries one of its writers is writing, and quiet until
	// when none claims (after a failed write); under Consumers.mu. Its writers
	// share one consumer name, so each would otherwise claim the other's.
	inFlight map[string]bool
	quiet    time.Time
	// bell is rung when this process queued an order of the product
	// (bell.go); one ring wakes one idle writer, and a writer that reads
	// a full batch rings it again for another.
	bell chan struct{}
}

// NewConsumers returns the consumers of this process, writing through w.
// None runs until KeepConsuming. Close it before closing q's client.
func NewConsumers(q *Queue, w Writer, opts ConsumerOptions) *Consumers {
	if opts.Name == "" {
		opts.Name = defaultName()
	}
	if opts.BatchMax <= 0 {
		opts.BatchMax = DefaultBatchMax
	}
	if opts.Writers <= 0 {
		opts.Writers = DefaultWriters
	}
	if opts.ClaimIdle <= 0 {
		opts.ClaimIdle = DefaultClaimIdle
	}
	if opts.Linger <= 0 {
		opts.Linger = DefaultLinger
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &Consumers{q: q, w: w, opts: opts, running: map[string]*consumer{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.unring = q.bells.add(c.ring)
	return c
}

// defaultName is host-pid-random: unique per process.
func defaultName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// KeepConsuming starts product's consumer in this process, unless it runs, and
// keeps it running for at least Linger from now. After Close it does
// nothing.
func (c *Consumers) KeepConsuming(product string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if k, ok := c.running[product]; ok {
		k.wanted = time.Now()
		return
	}
	k := &consumer{product: product, wanted: time.Now(), inFlight: map[string]bool{}, bell: make(chan struct{}, 1)}
	c.running[product] = k
	for range c.opts.Writers {
		c.wg.Add(1)
		go c.run(k)
	}
}

// ring wakes an idle writer of product's consumer, if it runs here; a
// ring while none is idle waits for the next one that is.
func (c *Consumers) ring(product string) {
	c.mu.Lock()
	k := c.running[product]
	c.mu.Unlock()
	if k != nil {
		k.ring()
	}
}

// ring wakes one idle writer of k, now or when one next idles.
func (k *consumer) ring() {
	select {
	case k.bell <- struct{}{}:
	default: // rung already
	}
}

// Close stops every consumer and waits for them: a batch being written
// finishes its transaction and its acknowledgement first. Entries read and
// not yet written stay pending, for another shop to claim.
func (c *Consumers) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.unring()
	c.cancel()
	c.wg.Wait()
}

// Problem says why this process's consumers cannot write, "" if they can:
// a write failed within the last two rounds of claiming and none has
// worked since. Such a write's entries stay pending, not lost.
func (c *Consumers) Problem() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	since := time.Now().Add(-2 * (c.opts.ClaimIdle + claimEvery))
	for _, k := range c.running {
		if !k.failed.IsZero() && k.failed.After(since) {
			return fmt.Sprintf("queue: cannot write the queued orders of %q to the database (they stay pending): %s", k.product, k.why)
		}
	}
	return ""
}

// done reports whether k stops: nobody asked for its product for Linger and
// its stream is empty. Then it is no longer running.
func (c *Consumers) done(ctx context.Context, k *consumer) bool {
	c.mu.Lock()
	idle := time.Since(k.wanted) > c.opts.Linger
	c.mu.Unlock()
	if !idle {
		return false
	}
	b, err := c.q.Backlog(ctx, k.product)
	if err != nil || b.Length > 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(k.wanted) <= c.opts.Linger { // asked for meanwhile
		return false
	}
	if c.running[k.product] == k { // (its other writer may have stopped it)
		delete(c.running, k.product)
	}
	return true
}

// idle waits until k's bell rings, pollEvery passes, or ctx ends.
func (c *Consumers) idle(ctx context.Context, k *consumer) { wait(ctx, pollEvery, k.bell) }

// pause waits retryPause or until ctx ends.
func (c *Consumers) pause(ctx context.Context) { wait(ctx, retryPause, nil) }

// wait waits d, or until ctx ends or bell (unless nil) rings.
func wait(ctx context.Context, d time.Duration, bell <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-bell:
	case <-t.C:
	case <-ctx.Done():
	}
}
