package stock

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/flashsale/flashsale/internal/strategy"
)

// Limits enforced by Create. They keep a demo product within what the schema
// stores and what a workshop run can wait for.
const (
	// MaxIDLen is the longest product or user id.
	MaxIDLen = 64
	// MaxNameLen is the longest product name, in characters.
	MaxNameLen = 200
	// MaxStock is the largest stock a product may start with.
	MaxStock = 10_000_000
	// MinLockTTL and MaxLockTTL bound a product's lock TTL.
	MinLockTTL = 10 * time.Millisecond
	MaxLockTTL = time.Minute
	// MaxWork bounds the simulated work inside the critical section.
	MaxWork = 10 * time.Second
	// MaxStall bounds the simulated stall inside the critical section.
	MaxStall = time.Minute
	// DefaultLockTTL is the lock TTL of a product created without one.
	DefaultLockTTL = 5 * time.Second
	// MaxLateCommit bounds the late-commit fault's hold.
	MaxLateCommit = time.Minute
	// DefaultLateCommitEvery is the late-commit schedule of a product that
	// sets LateCommit without LateCommitEvery: the 1st, 11th, 21st... order
	// of each shop process commits late.
	DefaultLateCommitEvery = 10
	// MaxLateCommitEvery bounds LateCommitEvery.
	MaxLateCommitEvery = 1_000_000
	// MaxBatch bounds BatchMax: one batch is one multi-row INSERT.
	MaxBatch = 256
	// MaxBuckets bounds Buckets.
	MaxBuckets = 256
	// MaxPayWithin bounds PayWithin.
	MaxPayWithin = time.Hour
)

// ValidID reports whether id is 1..64 characters of [A-Za-z0-9._:-], the
// rule for product and user ids. Ids are checked before they are used in a
// Redis key or a query.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// CheckID is the one check of a product or user id: nil if valid, else an
// error in the one wording every package uses, for callers to wrap with the
// field's name and their own sentinel.
func CheckID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("must be 1..%d characters of [A-Za-z0-9._:-], got %q", MaxIDLen, clip(id))
	}
	return nil
}

// checkID returns nil if id is valid, or an error wrapping ErrInvalid that
// names field.
func checkID(field, id string) error {
	if err := CheckID(id); err != nil {
		return invalid(field, "%v", err)
	}
	return nil
}

// validate checks p and fills in the defaults (name, TTL, late-commit
// schedule); an error wrapping ErrInvalid names the first bad field.
func validate(p *Product) error {
	if err := checkID("id", p.ID); err != nil {
		return err
	}
	if p.Name == "" {
		p.Name = p.ID
	}
	if !utf8.ValidString(p.Name) || utf8.RuneCountInString(p.Name) > MaxNameLen {
		return invalid("name", "must be valid UTF-8 of at most %d characters", MaxNameLen)
	}
	if p.Stock < 0 || p.Stock > MaxStock {
		return invalid("stock", "must be 0..%d, got %d", MaxStock, p.Stock)
	}
	if _, err := strategy.Parse(string(p.Strategy)); err != nil {
		return invalid("strategy", "must be one of %s, got %q", strategy.List(), clip(string(p.Strategy)))
	}
	if p.LockTTL == 0 {
		p.LockTTL = DefaultLockTTL
	}
	if err := checkMillis("lock_ttl_ms", p.LockTTL, MinLockTTL, MaxLockTTL); err != nil {
		return err
	}
	if err := checkMillis("work_ms", p.Work, 0, MaxWork); err != nil {
		return err
	}
	if err := checkMillis("stall_ms", p.Stall, 0, MaxStall); err != nil {
		return err
	}
	if math.IsNaN(p.StallRate) || p.StallRate < 0 || p.StallRate > 1 {
		return invalid("stall_rate", "must be 0..1, got %v", p.StallRate)
	}
	if err := checkMillis("late_commit_ms", p.LateCommit, 0, MaxLateCommit); err != nil {
		return err
	}
	if p.LateCommitEvery < 0 || p.LateCommitEvery > MaxLateCommitEvery {
		return invalid("late_commit_every", "must be 0..%d, got %d", MaxLateCommitEvery, p.LateCommitEvery)
	}
	if p.LateCommit > 0 && p.LateCommitEvery == 0 {
		p.LateCommitEvery = DefaultLateCommitEvery
	}
	if p.BatchMax < 0 || p.BatchMax > MaxBatch {
		return invalid("batch_max", "must be 0..%d, got %d", MaxBatch, p.BatchMax)
	}
	if p.BatchMax > 0 && !p.Strategy.Batches() {
		return invalid("batch_max", "is for lua, redlock, fenced and etcd, not %s, which sells one buyer at a time", p.Strategy)
	}
	if p.Buckets < 0 || p.Buckets > MaxBuckets {
		return invalid("buckets", "must be 0..%d, got %d", MaxBuckets, p.Buckets)
	}
	if p.Buckets > 1 && p.Strategy != strategy.SQLAtomic && p.Strategy != strategy.RedisDecr {
		return invalid("buckets", "is for sql-atomic and redis-decr, not %s", p.Strategy)
	}
	return checkMillis("pay_within_ms", p.PayWithin, 0, MaxPayWithin)
}

// checkMillis checks that d is a whole number of milliseconds in min..max:
// the table stores milliseconds.
func checkMillis(field string, d, min, max time.Duration) error {
	if d < min || d > max || d%time.Millisecond != 0 {
		return invalid(field, "must be whole milliseconds in %d..%d, got %v", min.Milliseconds(), max.Milliseconds(), d)
	}
	return nil
}

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}

// clip shortens s for an error message, so a huge bad input is not echoed.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
