package order

import (
	"context"
	"errors"
	"fmt"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// fromLock translates an error from taking a lock: which one, for the
// message.
func fromLock(err error, which string) error {
	switch {
	case errors.Is(err, dlock.ErrNotObtained):
		return fmt.Errorf("%w: %w", ErrDuplicateRequest, err)
	case errors.Is(err, dlock.ErrTimeout):
		return fmt.Errorf("%w: %w", ErrLockTimeout, err)
	case errors.Is(err, dlock.ErrUnavailable):
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, which, err)
	}
	return fmt.Errorf("order: %s: %w", which, err)
}

// fromCritical translates an error from p's critical section, which ran on
// lockCtx (derived from ctx, the caller's), and counts a lost lock.
func (s *Service) fromCritical(ctx, lockCtx context.Context, p stock.Product, err error) error {
	switch {
	case errors.Is(err, ErrSoldOut), errors.Is(err, ErrDuplicateOrder), errors.Is(err, stock.ErrNotFound),
		errors.Is(err, ErrFencedOut), errors.Is(err, ErrInDoubt):
		return err // (fencedOut counted a refused token)
	case ctx.Err() != nil:
		// The caller gave up; the transaction, if begun, was rolled back.
		// The statements ran on the lock's context, which says only
		// "canceled" (see orderdb.Writer.Commit): the caller's reason comes first.
		return fmt.Errorf("order: %w: %w", ctx.Err(), err)
	case lockCtx.Err() != nil:
		// The watchdog found the lock gone (Redis unreachable, or the TTL
		// ran out between renewals) and cancelled the work before it wrote.
		s.happened(p.ID, p.Strategy, EventLockLost)
		return fmt.Errorf("%w: in the critical section: %w", ErrLockLost, context.Cause(lockCtx))
	case stock.IsConnError(err), stock.IsConflict(err):
		return fmt.Errorf("%w: database: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("order: %w", err)
}
