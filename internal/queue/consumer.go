package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The consumers: every shop runs one per redis-queue product it knows, in
// the product's one consumer group, under a name of its own. A consumer
// is Writers goroutines, and each loops:
//
//  1. every claimEvery, it claims the entries that have waited longer than
//     ClaimIdle for another consumer's acknowledgement (XAUTOCLAIM): that
//     consumer died, or cannot reach the database. Its own unacknowledged
//     entries come back to it the same way;
//  2. otherwise it reads up to BatchMax new entries (XREADGROUP, blocking
//     briefly when there are none);
//  3. it hands the batch to the Writer, which writes it in one transaction
//     (idempotent by order id: a redelivered entry is written once);
//  4. only after the commit it acknowledges the written entries, and
//     dead-letters those the database refused for good (Refuse). If the
//     write failed, it acknowledges nothing: the entries stay pending,
//     and step 1 hands them out again.
//
// A shop that dies between the commit and the acknowledgement leaves
// entries whose orders are written; whoever claims them finds them in the
// database and only acknowledges them. So nothing accepted is lost while
// Redis keeps its data, and nothing is written twice.

// Writer writes queued orders to the database: package order's Service.
// It must be safe for concurrent use.
type Writer interface {
	// WriteQueued writes orders of product in one transaction, skipping
	// any that is written already, and returns one Refusal per order
	// (nil: written, now or before) and the database's stock after the
	// commit. An error means nothing was written.
	WriteQueued(ctx context.Context, product string, orders []Order) (refusals []*Refusal, left int, err error)
}

// Refusal is why the database refused a queued order for good.
type Refusal struct {
	// Code is one of the order flow's error codes: not_found (the product
	// was deleted), sold_out (the database has fewer units than Redis
	// thought), duplicate_order (the buyer has another order).
	Code   string
	Reason string
}

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
	// after its product was last watched; zero means DefaultLinger. A
	// consumer never stops while its product's stream has entries.
	Linger time.Duration
	// Writers is how many batches of one product this process writes at
	// once; zero means DefaultWriters. The batches of a product take its
	// row one after the other, but while one holds it, another is read
	// from the stream or acknowledged: Redis's part of a batch overlaps
	// the database's.
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
	readBlock    = 100 * time.Millisecond // how long a read waits for new entries
	writeTimeout = 10 * time.Second       // bounds one batch's transaction
	ackTimeout   = 2 * time.Second        // bounds the acknowledgement after the commit
	retryPause   = 500 * time.Millisecond // after a failed read or write
)

// Consumers runs this process's consumers, one goroutine per product
// watched. Its methods are safe for concurrent use.
type Consumers struct {
	q    *Queue
	w    Writer
	opts ConsumerOptions

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]*consumer // product -> its consumer
	closed  bool
}

// consumer is one product's consumer in this process.
type consumer struct {
	product string
	// watched is when the product was last watched, failed when a write
	// last failed and why (zero: the last write worked); under
	// Consumers.mu.
	watched time.Time
	failed  time.Time
	why     string
	// inFlight is the entries one of its writers is writing, and quiet
	// until when none of them claims (after a failed write); under
	// Consumers.mu. Its writers share one consumer name, so each would
	// otherwise claim what the other is writing, or has just failed to.
	inFlight map[string]bool
	quiet    time.Time
}

// NewConsumers returns the consumers of this process, writing through w.
// None runs until Watch. Close it before closing q's client.
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
	return c
}

// defaultName is host-pid-random: unique per process.
func defaultName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// Name is this process's consumer name.
func (c *Consumers) Name() string { return c.opts.Name }

// Watch starts product's consumer in this process, unless it runs, and
// keeps it running for at least Linger from now. After Close it does
// nothing.
func (c *Consumers) Watch(product string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if k, ok := c.running[product]; ok {
		k.watched = time.Now()
		return
	}
	k := &consumer{product: product, watched: time.Now(), inFlight: map[string]bool{}}
	c.running[product] = k
	for range c.opts.Writers {
		c.wg.Add(1)
		go c.run(k)
	}
}

// Close stops every consumer and waits for them: a batch being written
// finishes its transaction and its acknowledgement first. Entries read and
// not yet written stay pending, for another shop to claim.
func (c *Consumers) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// Problem says why this process's consumers cannot write, "" if they
// can: a write failed within the last two rounds of claiming (a failed
// batch is claimed again after ClaimIdle, within claimEvery) and none has
// worked since. The entries of such a write stay pending, not lost.
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

// run is one writer of product k's consumer (it has Writers), until
// Close, or until it has had nothing to do for Linger and the stream is
// empty.
func (c *Consumers) run(k *consumer) {
	defer c.wg.Done()
	ctx := c.ctx
	grouped := false
	var nextClaim time.Time
	for ctx.Err() == nil {
		if !grouped {
			if err := c.q.ensureGroup(ctx, k.product); err != nil {
				c.pause(ctx)
				continue
			}
			grouped = true
		}
		var msgs []redis.XMessage
		var err error
		if now := time.Now(); !now.Before(nextClaim) && !c.quiet(k, now) {
			nextClaim = now.Add(claimEvery)
			msgs, err = c.claim(ctx, k.product)
			msgs = c.notInFlight(k, msgs)
		}
		if err == nil && len(msgs) == 0 {
			msgs, err = c.read(ctx, k.product)
		}
		switch {
		case isNoGroup(err):
			grouped = false
			continue
		case err != nil:
			if ctx.Err() == nil {
				c.opts.Logger.Debug("queue: read", "product", k.product, "err", err)
				c.pause(ctx)
			}
			continue
		case len(msgs) > 0:
			c.handle(ctx, k, msgs)
			continue
		}
		if c.done(ctx, k) {
			return
		}
	}
}

// quiet reports whether k's writers claim nothing now (a write failed).
func (c *Consumers) quiet(k *consumer, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Before(k.quiet)
}

// notInFlight drops from msgs the entries another writer of k is writing.
func (c *Consumers) notInFlight(k *consumer, msgs []redis.XMessage) []redis.XMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := msgs[:0]
	for _, m := range msgs {
		if !k.inFlight[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// claim takes over the entries idle longer than ClaimIdle, up to a batch.
func (c *Consumers) claim(ctx context.Context, product string) ([]redis.XMessage, error) {
	msgs, _, err := c.q.c.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: streamKey(product), Group: Group, Consumer: c.opts.Name,
		MinIdle: c.opts.ClaimIdle, Start: "0-0", Count: int64(c.opts.BatchMax),
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return msgs, err
}

// read reads up to a batch of new entries, waiting up to readBlock.
func (c *Consumers) read(ctx context.Context, product string) ([]redis.XMessage, error) {
	streams, err := c.q.c.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: Group, Consumer: c.opts.Name, Streams: []string{streamKey(product), ">"},
		Count: int64(c.opts.BatchMax), Block: readBlock,
	}).Result()
	if errors.Is(err, redis.Nil) || len(streams) == 0 {
		return nil, nil
	}
	return streams[0].Messages, err
}

// done reports whether k stops: nobody watched its product for Linger and
// its stream is empty. Then it is no longer running.
func (c *Consumers) done(ctx context.Context, k *consumer) bool {
	c.mu.Lock()
	idle := time.Since(k.watched) > c.opts.Linger
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
	if time.Since(k.watched) <= c.opts.Linger { // watched meanwhile
		return false
	}
	if c.running[k.product] == k { // (its other writer may have stopped it)
		delete(c.running, k.product)
	}
	return true
}

// pause waits retryPause or until ctx ends.
func (c *Consumers) pause(ctx context.Context) { c.wait(ctx, retryPause) }

// wait waits d or until ctx ends.
func (c *Consumers) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// handle writes one batch and settles its entries in Redis: written ones
// acknowledged, refused ones dead-lettered. If the write fails, nothing is
// acknowledged.
func (c *Consumers) handle(ctx context.Context, k *consumer, msgs []redis.XMessage) {
	c.mu.Lock()
	for _, m := range msgs {
		k.inFlight[m.ID] = true
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		for _, m := range msgs {
			delete(k.inFlight, m.ID)
		}
		c.mu.Unlock()
	}()
	orders := make([]Order, 0, len(msgs))
	ids := make([]string, 0, len(msgs))
	var junk []string
	for _, m := range msgs {
		o, ok := parseEntry(m)
		if !ok {
			junk = append(junk, m.ID) // deleted meanwhile, or not ours
			continue
		}
		orders = append(orders, o)
		ids = append(ids, m.ID)
	}
	// The transaction may finish after Close: its acknowledgement too.
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout+ackTimeout)
	defer cancel()
	if len(junk) > 0 {
		_ = c.q.written(settle, k.product, junk, nil)
	}
	if len(orders) == 0 {
		return
	}
	wctx, wcancel := context.WithTimeout(settle, writeTimeout)
	refusals, left, err := c.w.WriteQueued(wctx, k.product, orders)
	wcancel()
	if err != nil {
		c.failed(k, err)
		c.opts.Logger.Warn("queue: write a batch; its entries stay pending", "product", k.product,
			"orders", len(orders), "err", err)
		// Read nothing for the backoff either (failed keeps both writers
		// from claiming for as long).
		c.wait(ctx, c.backoff())
		return
	}
	c.failed(k, nil)
	var okIDs, okOrders []string
	refused, soldOut := 0, false
	for i, o := range orders {
		r := refusals[i]
		if r == nil {
			okIDs, okOrders = append(okIDs, ids[i]), append(okOrders, o.ID)
			continue
		}
		done, err := c.q.refuse(settle, ids[i], o, r)
		if err != nil {
			c.opts.Logger.Warn("queue: dead-letter an entry; it stays pending", "product", k.product, "order", o.ID, "err", err)
			continue
		}
		if done {
			refused++
		}
		soldOut = soldOut || r.Code == "sold_out"
	}
	if len(okIDs) > 0 {
		if err := c.q.written(settle, k.product, okIDs, okOrders); err != nil {
			c.opts.Logger.Warn("queue: acknowledge written entries; they will be claimed again", "product", k.product, "err", err)
		}
	}
	if soldOut {
		// The database had fewer units than Redis offered: Redis must not
		// go on offering them.
		if err := c.q.Lower(settle, k.product, left); err != nil {
			c.opts.Logger.Warn("queue: lower the redis stock to the database's", "product", k.product, "err", err)
		}
	}
	if c.opts.Observe != nil {
		c.opts.Observe(k.product, len(okIDs), refused)
	}
}

// failed records how k's last write went (err nil: it worked). After a
// failure, none of k's writers claims for the backoff.
func (c *Consumers) failed(k *consumer, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		k.failed, k.why = time.Time{}, ""
		return
	}
	k.failed, k.why = time.Now(), "database unavailable"
	k.quiet = k.failed.Add(c.backoff())
}

// backoff is how long a consumer whose write failed claims nothing:
// longer than ClaimIdle and one round of claiming, so that a consumer
// that can write claims the failed batch first, instead of this one
// taking it back every ClaimIdle.
func (c *Consumers) backoff() time.Duration { return c.opts.ClaimIdle + 2*claimEvery }

// parseEntry reads an order from its stream entry.
func parseEntry(m redis.XMessage) (Order, bool) {
	str := func(k string) string { s, _ := m.Values[k].(string); return s }
	qty, err1 := strconv.Atoi(str("qty"))
	us, err2 := strconv.ParseInt(str("created"), 10, 64)
	o := Order{ID: str("id"), UserID: str("user"), ProductID: str("product"), Quantity: qty,
		CreatedAt: time.UnixMicro(us).UTC()}
	return o, err1 == nil && err2 == nil && o.ID != "" && o.UserID != "" && o.ProductID != ""
}

// written acknowledges entries, whose orders (if any) are written, deletes
// them, and forgets the orders' queued status.
func (q *Queue) written(ctx context.Context, product string, entries, orders []string) error {
	if orders == nil {
		orders = make([]string, len(entries))
		for i := range orders {
			orders[i] = "-"
		}
	}
	args := make([]any, 0, 2+2*len(entries))
	args = append(args, Group, len(entries))
	for _, e := range entries {
		args = append(args, e)
	}
	for _, o := range orders {
		args = append(args, o)
	}
	err := writtenScript.Run(ctx, q.c, []string{streamKey(product), statusKey(product)}, args...).Err()
	return redisErr(ctx, err, "acknowledge", product)
}

// refuse dead-letters entry, whose order o the database refused for r:
// its units go back, its status says why, and it is acknowledged. It
// reports whether this call did it (false: the entry was settled before).
func (q *Queue) refuse(ctx context.Context, entry string, o Order, r *Refusal) (bool, error) {
	keys := []string{stockKeyOf(o.ProductID), buyersKey(o.ProductID), streamKey(o.ProductID), statusKey(o.ProductID)}
	n, err := refusedScript.Run(ctx, q.c, keys, Group, entry, o.UserID, o.ID, o.Quantity, refusal(r.Code, r.Reason)).Int()
	if err != nil {
		return false, redisErr(ctx, err, "dead-letter", o.ProductID)
	}
	return n == 1, nil
}
