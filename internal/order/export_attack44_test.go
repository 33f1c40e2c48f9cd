package order

import "context"

// SweepOwedSplit reads the rows of redis_owed that sweepOwed would
// settle now (dueOwed) and returns how many, and their settling
// (settleOwedOf, row by row, as sweepOwed's loop does), for a test that
// puts another shop's sweep, a loss of Redis and a load between one
// sweep's read of its rows and its sends: the time a sweep spends on
// the rows before them, up to owedBatch round trips.
func SweepOwedSplit(ctx context.Context, s *Service) (settle func() error, n int, err error) {
	rows, err := s.dueOwed(ctx, nil)
	return func() error {
		for _, r := range rows {
			if err := s.settleOwedOf(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}, len(rows), err
}

// OwedBatch is how many rows of redis_owed one sweep reads at most.
const OwedBatch = owedBatch
