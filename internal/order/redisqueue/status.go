package redisqueue

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/stock"
)

// The statuses of an order Redis still knows.
const (
	// StatusQueued: accepted, its entry not yet written.
	StatusQueued = "queued"
	// StatusRefused: the database refused it for good; its units were
	// given back.
	StatusRefused = "refused"
)

// State is what Redis knows of one accepted order.
type State struct {
	ProductID string
	// Status is StatusQueued or StatusRefused.
	Status string
	// Code and Reason say why a refused order was refused: Code is one of
	// the order flow's error codes (sold_out, not_found, duplicate_order),
	// Reason a sentence for the buyer.
	Code, Reason string
}

// Status returns what Redis knows of the order id: queued or refused.
// Errors: stock.ErrUnknownOrder when Redis knows no such order (never accepted,
// accepted more than a day ago, or written: the database answers for
// those); stock.ErrUnavailable when Redis could not be reached. Safe for
// concurrent use; it only reads.
func (q *Queue) Status(ctx context.Context, id string) (State, error) {
	product, err := q.c.Get(ctx, orderKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return State{}, stock.ErrUnknownOrder
	}
	if err != nil {
		return State{}, redisErr(ctx, err, "status", id)
	}
	v, err := q.c.HGet(ctx, statusKey(product), id).Result()
	if errors.Is(err, redis.Nil) {
		return State{ProductID: product}, stock.ErrUnknownOrder
	}
	if err != nil {
		return State{}, redisErr(ctx, err, "status", id)
	}
	st := State{ProductID: product, Status: v}
	if rest, ok := strings.CutPrefix(v, StatusRefused+":"); ok {
		st.Status = StatusRefused
		st.Code, st.Reason, _ = strings.Cut(rest, ":")
	}
	return st, nil
}

// refusal is the status value of an order refused with code for reason.
func refusal(code, reason string) string { return StatusRefused + ":" + code + ":" + reason }

// Backlog is what is left to write of one product's queue.
type Backlog struct {
	// Length is the entries in the stream: accepted and not yet written
	// or refused (entries leave the stream once they are).
	Length int64
	// Pending is those of them delivered to a consumer and not yet
	// acknowledged: being written, or held by a consumer that died or
	// cannot reach the database.
	Pending int64
}

// Lag is the entries no consumer has read yet.
func (b Backlog) Lag() int64 { return max(0, b.Length-b.Pending) }

// Drained reports whether nothing is left to write.
func (b Backlog) Drained() bool { return b.Length == 0 && b.Pending == 0 }

// Backlog reads product's backlog in one round trip. A product never
// queued has none. Errors: stock.ErrUnavailable.
func (q *Queue) Backlog(ctx context.Context, product string) (Backlog, error) {
	var xlen *redis.IntCmd
	var pend *redis.XPendingCmd
	_, err := q.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		xlen = p.XLen(ctx, streamKey(product))
		pend = p.XPending(ctx, streamKey(product), Group)
		return nil
	})
	var b Backlog
	if xlen != nil {
		b.Length = xlen.Val()
	}
	if pend != nil && pend.Err() == nil {
		b.Pending = pend.Val().Count
	}
	if err != nil && !isNoGroup(err) {
		return b, redisErr(ctx, err, "backlog", product)
	}
	return b, nil
}

// isNoGroup reports whether err is Redis saying the stream or its group
// does not exist.
func isNoGroup(err error) bool { return redis.HasErrorPrefix(err, "NOGROUP") }
