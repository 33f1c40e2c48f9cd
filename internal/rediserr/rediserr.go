// Package rediserr owns the one rule by which the packages that call
// Redis (dlock, redisstock, queue) translate a failed call at the boundary, so that
// every Redis error reads and compares the same.
package rediserr

import (
	"context"
	"fmt"
)

// Wrap translates err, from a Redis call made on ctx to do op on key, for
// package pkg ("dlock", "redisstock"): nil stays nil; if ctx has ended, the
// error says so and wraps ctx's error, not unavailable (the caller gave
// up; Redis may be fine); any other failure (a refused connection, a
// timeout, a closed client, an error reply) means Redis could not serve
// the call, and the error wraps unavailable, the caller's sentinel, and
// err. Safe for concurrent use.
func Wrap(ctx context.Context, err, unavailable error, pkg, op, key string) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %s %q: %w", pkg, op, key, err)
	}
	return fmt.Errorf("%w: %s %q: %w", unavailable, op, key, err)
}
