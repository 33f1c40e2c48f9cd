package reserve

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Every shop sweeps the products it sells (package order's reconciler),
// and every shop finds the same reservations due: without turns, N shops
// would settle each of them N times, and the wave of holds running out
// after a busy sale would cost the fleet N times what it costs one shop.
// So the sweepers take turns: the first to ask within a turn's length
// settles the ledger, and the others leave that round to it.
//
// A turn is not a lock. Settling is safe with any number of sweepers at
// once, so nothing breaks when two sweep together (the turn ran out under
// a slow sweep, or Redis lost the key): turns only save the work. And a
// sweeper that dies in its turn holds nobody up for longer than the turn.

// Turn asks for product's sweep turn for d (SET NX PX on its turn key,
// "flashsale:sweep:{<id>}"), and reads how many reservations its ledger
// holds, in one round trip. mine reports whether the turn is the
// caller's: it is until d has passed, and nobody else's. Safe for
// concurrent use, in any number of processes. Errors: ErrUnavailable or
// ctx's; then mine is false, and the caller should sweep all the same.
func (s *Stock) Turn(ctx context.Context, product string, d time.Duration) (mine bool, held int, err error) {
	var set *redis.BoolCmd
	var card *redis.IntCmd
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetNX(ctx, turnKey(product), 1, d)
		card = p.ZCard(ctx, ledgerKey(product))
		return nil
	})
	if err != nil {
		return false, 0, redisErr(ctx, err, "ask for the sweep turn", product)
	}
	return set.Val(), int(card.Val()), nil
}

func turnKey(product string) string { return "flashsale:sweep:{" + product + "}" }
