package order

import (
	"context"
	"fmt"

	"github.com/flashsale/flashsale/internal/order/life"
)

// SweepOwedSplit reads the rows of redis_owed that sweepOwed would
// settle now (the same query) and returns how many, and their settling
// (settleOwed, row by row, as sweepOwed's loop does), for a test that
// puts another shop's sweep, a loss of Redis and a load between one
// sweep's read of its rows and its sends: the time a sweep spends on
// the rows before them, up to owedBatch round trips.
func SweepOwedSplit(ctx context.Context, s *Service) (settle func() error, n int, err error) {
	var rows []owedRow
	now := life.NowMs(s.db)
	q := fmt.Sprintf(`SELECT * FROM redis_owed WHERE (paid_ms IS NULL AND created_ms <= %s - ?)
		OR paid_ms <= %s - ? ORDER BY created_ms LIMIT ?`, now, now)
	err = s.db.WithContext(ctx).Raw(q, owedGrace.Milliseconds(), s.owedKeep.Milliseconds(), owedBatch).Scan(&rows).Error
	return func() error {
		for _, r := range rows {
			if err := s.settleOwed(ctx, r, now); err != nil {
				return err
			}
		}
		return nil
	}, len(rows), err
}

// OwedBatch is how many rows of redis_owed one sweep reads at most.
const OwedBatch = owedBatch
