package redisstock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sweep turns: every shop finds the same reservations due, so the sweepers
// take turns, and the first to ask within a turn's length settles the
// ledger. A turn is not a lock: settling is safe with any number of
// sweepers, and turns only save the work. A shop that lives but cannot
// settle may take every turn, so a reservation past its hold by more than
// a margin is stuck, and every sweeper settles it.

var (
	//go:embed scripts/turn.lua
	turnLua    string
	turnScript = redis.NewScript(turnLua)
)

// Turn asks for product's sweep turn for d (SET NX PX on
// "flashsale:sweep:{<id>}") and reads how many reservations the ledger
// holds and whether one fell due over stuckAfter ago, in one round trip.
// mine: the turn is the caller's until d has passed. Out of turn, settle
// anyway if stuck. Safe for concurrent use, in any number of processes.
// Errors: stock.ErrUnavailable or ctx's (then sweep all the same).
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
