package redisqueue

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The consumers: every shop runs one per redis-queue product it knows, in
// the product's one consumer group, under a name of its own. Each of its
// Writers goroutines loops:
//
//  1. every claimEvery, claim the entries idle past ClaimIdle (XAUTOCLAIM:
//     their consumer died or cannot write); else
//  2. read up to BatchMax new entries (XREADGROUP, not blocking: bell.go);
//  3. write the batch in one transaction, idempotent by order id;
//  4. only after the commit, acknowledge the written entries and
//     dead-letter the refused (Refuse); a failed write acknowledges
//     nothing, and step 1 hands its entries out again.
//
// So nothing accepted is lost while Redis keeps its data, and nothing is
// written twice.

// Writer writes queued orders to the database: the Seller (place.go).
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
			if len(msgs) == c.opts.BatchMax {
				// A full batch: there may be more, and the trip that
				// queued them rang once. Pass the ring on to a writer
				// that is idle.
				k.ring()
			}
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
		c.idle(ctx, k)
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

// read reads up to a batch of new entries, without waiting for any.
func (c *Consumers) read(ctx context.Context, product string) ([]redis.XMessage, error) {
	streams, err := c.q.c.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: Group, Consumer: c.opts.Name, Streams: []string{streamKey(product), ">"},
		Count: int64(c.opts.BatchMax), Block: -1, // -1: no BLOCK argument
	}).Result()
	if errors.Is(err, redis.Nil) || len(streams) == 0 {
		return nil, nil
	}
	return streams[0].Messages, err
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
	// The returns so far, before the database's stock is read: a lowering
	// to that stock must not undo a return that comes in between.
	returns, rerr := c.q.stock.Returns(settle, k.product)
	wctx, wcancel := context.WithTimeout(settle, writeTimeout)
	refusals, left, err := c.w.WriteQueued(wctx, k.product, orders)
	wcancel()
	if err != nil {
		c.failed(k, err)
		c.opts.Logger.Warn("queue: write a batch; its entries stay pending", "product", k.product,
			"orders", len(orders), "err", err)
		// Read nothing for the backoff either (failed keeps both writers
		// from claiming for as long).
		wait(ctx, c.backoff(), nil)
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
	if soldOut && rerr == nil {
		// The database had fewer units than Redis offered: Redis must not
		// go on offering them.
		if err := c.q.Lower(settle, k.product, left, returns); err != nil {
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

// backoff is how long a consumer whose write failed claims nothing: longer
// than a round of claiming, so that a consumer that can write claims the
// failed batch first.
func (c *Consumers) backoff() time.Duration { return c.opts.ClaimIdle + 2*claimEvery }
