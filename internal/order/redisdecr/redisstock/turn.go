package redisstock

import (
	"context"
	_ "embed"
	"fmt"
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
//
// But a sweeper that lives and cannot settle (its database is gone) may
// take every turn: the first to ask after a turn runs out is the same
// shop each round, its ticker a few milliseconds ahead of the others'. So
// the turns hold only for the reservations just due: one past its hold by
// more than a margin is stuck, and every sweeper settles it, turn or not.

var (
	//go:embed scripts/turn.lua
	turnLua    string
	turnScript = redis.NewScript(turnLua)
)

// Turn asks for product's sweep turn for d (SET NX PX on its turn key,
// "flashsale:sweep:{<id>}"), and reads how many reservations its ledger
// holds, and whether one of them fell due more than stuckAfter ago (by
// Redis's clock), in one round trip. mine reports whether the turn is the
// caller's: it is until d has passed, and nobody else's. A caller out of
// turn should settle all the same if stuck: whoever takes the turns is
// not settling. Safe for concurrent use, in any number of processes.
// Errors: stock.ErrUnavailable or ctx's; then mine is false, and the caller
// should sweep all the same.
func (s *Stock) Turn(ctx context.Context, product string, d, stuckAfter time.Duration) (mine bool, held int, stuck bool, err error) {
	res, err := turnScript.Run(ctx, s.c, []string{turnKey(product), ledgerKey(product)},
		max(d.Milliseconds(), 1), stuckAfter.Milliseconds()).Int64Slice()
	if err != nil {
		return false, 0, false, redisErr(ctx, err, "ask for the sweep turn", product)
	}
	if len(res) != 3 {
		return false, 0, false, fmt.Errorf("redisstock: sweep turn of %q: unexpected reply %v", product, res)
	}
	return res[0] == 1, int(res[1]), res[2] == 1, nil
}

func turnKey(product string) string { return "flashsale:sweep:{" + product + "}" }
