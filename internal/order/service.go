package order

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// DefaultLockWait is how long Place waits for a product lock when
// Options.LockWait is zero.
const DefaultLockWait = 5 * time.Second

// releaseTimeout bounds the release of a lock, which runs on a context that
// survives the caller's cancellation.
const releaseTimeout = 2 * time.Second

// Options tune a Service. The zero value is ready to use.
type Options struct {
	// LockWait is the longest Place waits for the product lock before it
	// returns ErrLockTimeout; zero means DefaultLockWait.
	LockWait time.Duration
	// Rand returns a number in [0, 1) and decides whether a critical section
	// stalls (it stalls when Rand() < the product's StallRate). Nil means
	// math/rand/v2. It must be safe for concurrent use. Tests set it to make
	// stalls deterministic.
	Rand func() float64
	// Sleep waits d or until ctx ends, returning ctx.Err() in that case; it
	// simulates the business latency. Nil means a timer. It must be safe for
	// concurrent use.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives warnings (a lock that expired before its release);
	// nil means slog.Default().
	Logger *slog.Logger
}

// Service places orders and audits sales. It is safe for concurrent use.
// One Service stands for one shop process: several of them may share a
// database and Redis, each with its own lockers.
type Service struct {
	db          *gorm.DB
	products    *stock.Store
	lockers     map[dlock.Mode]dlock.Locker
	opts        Options
	cache       sync.Map // product id -> stock.Product; see product
	soldOutSeen sync.Map // product id -> struct{}; see soldOut
}

// NewService returns a Service that writes orders to db, reads products from
// products, and locks with lockers, which must hold a Locker for every mode
// its products use (Place returns an error for a product whose mode has
// none). The caller keeps ownership of db and the lockers and closes them
// after the last call returned.
func NewService(db *gorm.DB, products *stock.Store, lockers map[dlock.Mode]dlock.Locker, opts Options) *Service {
	if opts.LockWait <= 0 {
		opts.LockWait = DefaultLockWait
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := make(map[dlock.Mode]dlock.Locker, len(lockers))
	for mode, l := range lockers {
		m[mode] = l
	}
	return &Service{db: db, products: products, lockers: m, opts: opts}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
