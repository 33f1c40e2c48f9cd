package redisqueue

import (
	"context"
	"time"
)

// Accept is AcceptBy with no bound but ctx.
func (q *Queue) Accept(ctx context.Context, o Order) (int, error) {
	return q.AcceptBy(ctx, o, time.Time{})
}
