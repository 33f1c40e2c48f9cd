package order

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/order/redisdecr"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
	"github.com/flashsale/flashsale/internal/order/redisqueue"
	"github.com/flashsale/flashsale/internal/order/sqlatomic"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// DefaultLockWait is how long Place waits for a product lock when
// Options.LockWait is zero.
const DefaultLockWait = 5 * time.Second

// Options tune a Service. The zero value is ready to use.
type Options struct {
	// LockWait is the longest Place waits for the product lock before it
	// returns ErrLockTimeout; zero means DefaultLockWait.
	LockWait time.Duration
	// Rand returns a number in [0, 1): a critical section stalls when Rand() <
	// the product's StallRate. Nil means math/rand/v2. Safe for concurrent use.
	Rand func() float64
	// Sleep waits d or until ctx ends, returning ctx.Err() in that case; it
	// simulates the business latency. Nil means a timer. It must be safe for
	// concurrent use.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives warnings (a lock that expired before its release);
	// nil means slog.Default().
	Logger *slog.Logger
	// RedisDecr is where strategy redis-decr keeps its stock in Redis
	// (redisdecr.Seller); nil means Place and AddProduct refuse its products.
	RedisDecr *redisstock.Stock
	// Queue is where strategy redis-queue takes its units and queues its
	// orders; nil means no redis-queue products. With it, each redis-queue
	// product asked about gets a consumer (redisqueue.Seller) until Close.
	Queue *redisqueue.Queue
	// QueueOptions tune the consumers (redisqueue.ConsumerOptions); their
	// Observe is the Service's own.
	QueueOptions redisqueue.ConsumerOptions
	// Observer hears how every order goes (metrics); nil means nobody
	// does. It must be safe for concurrent use.
	Observer Observer
	// Now is this shop's own clock, which stamps created_at; nil means
	// time.Now. Deadlines use the database's clock (package life), never this.
	Now func() time.Time
	// SweepEvery is the pause between two sweeps of this shop's unpaid orders
	// (Sweep); zero means DefaultSweepEvery, below zero no sweep of its own.
	SweepEvery time.Duration
	// NaiveExpiry makes this shop's sweep the textbook's broken one
	// (expire_naive.go): a read, then a write without the compare-and-set,
	// by this shop's own clock. For the workshop only.
	NaiveExpiry bool
}

// Service places orders and audits sales. It is safe for concurrent use.
// One Service stands for one shop process; several may share a database
// and Redis, each with its own lockers. Close it when done.
type Service struct {
	db          *gorm.DB
	writer      *orderdb.Writer // db's, with the late-commit fault (commit_late.go)
	products    *stock.Store
	lockers     map[dlock.Mode]dlock.Locker
	opts        Options
	cache       sync.Map     // product id -> stock.Product; see product
	soldOutSeen sync.Map     // product id -> struct{}; see soldOut
	counters    sync.Map     // product id -> *counters; see events
	batches     sync.Map     // product id -> *batchQueue; see placeBatched
	flavor      atomic.Int32 // the database, as sql-for-update locks its rows; see rowFlavor

	leaders  sync.WaitGroup  // lead's goroutines
	stopping context.Context // ended by Close: the leaders stop asking for the lock
	stop     context.CancelFunc

	redisDecr *redisdecr.Seller // nil without Options.RedisDecr
	sqlAtomic *sqlatomic.Seller // sql-atomic's, and sql-one-trip's on SQLite

	redisQueue *redisqueue.Seller // nil without Options.Queue

	sweeping atomic.Bool    // the sweep of unpaid orders runs (sweep.go)
	sweeps   sync.WaitGroup // its goroutine, and sweepIfPending's

	// crashAfterCommit makes payRedis do nothing, as a shop killed right
	// after a return's commit: false, and a test's fault (export_test.go).
	crashAfterCommit atomic.Bool
	// owedKeep is how long a paid return stays owed before its last send
	// (owed.go): defaultOwedKeep, shorter in tests (export_test.go).
	owedKeep time.Duration
	// owedGrace is how old an unpaid owed row is before the sweep pays it
	// (owed.go): defaultOwedGrace, shorter in tests (export_test.go).
	owedGrace time.Duration
}

// NewService returns a Service that writes orders to db, reads products from
// products, and locks with lockers: one Locker for every lock mode its
// products' strategies use (Place refuses a strategy without one), and lua's
// for the fencing strategies' dedupe lock. The caller keeps ownership of db
// and the lockers, and closes them after Close.
func NewService(db *gorm.DB, products *stock.Store, lockers map[dlock.Mode]dlock.Locker, opts Options) *Service {
	if opts.LockWait <= 0 {
		opts.LockWait = DefaultLockWait
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	if opts.Sleep == nil {
		opts.Sleep = orderdb.Sleep
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Observer == nil {
		opts.Observer = noObserver{}
	}
	if opts.SweepEvery == 0 {
		opts.SweepEvery = DefaultSweepEvery
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{db: db, products: products, lockers: maps.Clone(lockers), opts: opts, owedKeep: defaultOwedKeep, owedGrace: defaultOwedGrace}
	s.writer = orderdb.NewWriter(db, s.withLateCommits)
	s.sqlAtomic = sqlatomic.New(s.writer, s.markSoldOut, s.rowHeld)
	s.stopping, s.stop = context.WithCancel(context.Background())
	if opts.RedisDecr != nil {
		s.redisDecr = redisdecr.New(redisdecr.Options{Stock: opts.RedisDecr, Writer: s.writer, Work: s.work,
			SoldOut: s.markSoldOut, Logger: opts.Logger,
			GivenBack: func(id string) { s.happened(id, strategy.RedisDecr, EventGivenBack) },
			Reclaimed: func(id string) { s.happened(id, strategy.RedisDecr, EventReclaimed) },
			Grouped:   func(n int) { s.opts.Observer.Batched(strategy.RedisDecr, n) }})
	}
	if opts.Queue != nil {
		s.redisQueue = s.newQueueSeller() // queued.go
	}
	if db != nil {
		s.sweeps.Add(1)
		go s.sweepIfPending()
	}
	return s
}

// AddProduct creates p in the product store (stock.Store.Create: its checks
// and errors) and loads a Redis strategy's stock into Redis. A failed load is
// logged, not returned: the first order loads the stock instead. An error
// too for a Redis strategy this Service has no Redis for.
func (s *Service) AddProduct(ctx context.Context, p stock.Product) (stock.Product, error) {
	if p.Strategy == strategy.RedisDecr && s.opts.RedisDecr == nil {
		return stock.Product{}, fmt.Errorf("order: strategy %s needs Options.RedisDecr", p.Strategy)
	}
	if p.Strategy == strategy.RedisQueue && s.opts.Queue == nil {
		return stock.Product{}, fmt.Errorf("order: strategy %s needs Options.Queue", p.Strategy)
	}
	created, err := s.products.Create(ctx, p)
	if err != nil {
		return stock.Product{}, err
	}
	s.startSweep(created)
	switch created.Strategy {
	case strategy.RedisDecr:
		err = s.redisDecr.Load(ctx, created) // each bucket's share, if it has buckets
	case strategy.RedisQueue:
		err = s.redisQueue.Load(ctx, created.ID, created.Stock) // and start its consumer
	}
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "load stock into redis; the first order will", "product", created.ID, "err", err)
	}
	return created, nil
}

// Close stops, and waits for, the redis-decr Seller (settlements under way
// finish first), the redis-queue consumers, the batch leaders and the sweep.
// Call it after the last Place returned and before closing the database and
// Redis clients. Calling it again does nothing more.
func (s *Service) Close() error {
	if s.redisDecr != nil {
		s.redisDecr.Close()
	}
	s.stop()
	if s.redisQueue != nil {
		s.redisQueue.Close()
	}
	s.leaders.Wait()
	s.sweeps.Wait()
	return nil
}
