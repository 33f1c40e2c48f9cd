package order

import (
	"context"
	"database/sql"
	"strings"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// The late-commit fault (stock.Product.LateCommit) shows why a lease is not
// a mutex: for the orders isLate chooses, the shop holds back the COMMIT
// and the lock's renewals for LateCommit, then commits regardless, as a
// COMMIT on the wire when the network stalled would. The lease runs out and
// the next buyer reads before the old commit lands: lua and redlock
// oversell, fenced and etcd do not (locked_fence.go). It sits in front of
// the database: the shop's orderdb.Writer runs a faulted product's
// transactions on withLateCommits's database, and knows nothing else of it.

// withLateCommits returns s's database with p's late-commit fault in front
// of it, for one commit of p under lock (nil without one).
func (s *Service) withLateCommits(lock *dlock.Lock, p stock.Product) *gorm.DB {
	db := s.db.WithContext(context.Background()) // a Statement of its own
	db.Statement.ConnPool = &latePool{ConnPool: db.Statement.ConnPool, s: s, lock: lock, p: p}
	return db
}

// latePool begins transactions as lateTxs.
type latePool struct {
	gorm.ConnPool // the database's
	s             *Service
	lock          *dlock.Lock
	p             stock.Product
}

// BeginTx begins the database's transaction on a context of its own that
// follows ctx, as the statements do, until a late commit cuts that tie to
// outlive the lease.
func (l *latePool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if err := ctx.Err(); err != nil { // the tie below would be cut too late
		return nil, err
	}
	b, ok := l.ConnPool.(gorm.TxBeginner) // *sql.DB
	if !ok {
		return nil, gorm.ErrInvalidTransaction
	}
	txCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	follow := context.AfterFunc(ctx, cancel)
	tx, err := b.BeginTx(txCtx, opts)
	if err != nil {
		follow()
		cancel()
		return nil, err
	}
	return &lateTx{Tx: tx, pool: l, ctx: ctx, txCtx: txCtx, cancel: cancel, follow: follow}, nil
}

// lateTx is a transaction whose COMMIT the fault may hold back: one that
// inserted an order (a sale; a fenced sale that sold nothing inserts none
// and is let through), when isLate chooses it.
type lateTx struct {
	*sql.Tx
	pool     *latePool
	ctx      context.Context // the caller's: the lock's, for a locking strategy
	txCtx    context.Context // the transaction's: follows ctx while follow holds
	cancel   context.CancelFunc
	follow   func() bool
	inserted bool
}

func (t *lateTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.noteInsert(query)
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *lateTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.noteInsert(query)
	return t.Tx.QueryContext(ctx, query, args...)
}

// noteInsert remembers whether the transaction inserted rows: orders are
// the only rows a sale inserts.
func (t *lateTx) noteInsert(query string) {
	if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(query)), "INSERT") {
		t.inserted = true
	}
}

// Commit holds the COMMIT back for the product's LateCommit, with the
// lock's renewals, if isLate chooses this sale; then commits, lock or no
// lock. If ctx ended first it returns ctx's error, and the transaction
// rolls back.
func (t *lateTx) Commit() error {
	defer t.done()
	p := t.pool.p
	if t.inserted && t.pool.s.isLate(p) {
		if !t.follow() {
			return t.ctx.Err() // ctx ended first: this one rolls back
		}
		if t.pool.lock != nil {
			t.pool.lock.HoldRenewals(p.LateCommit)
		}
		t.pool.s.happened(p.ID, p.Strategy, EventLateCommit)
		if err := orderdb.Sleep(t.txCtx, p.LateCommit); err != nil {
			return err
		}
	} else if err := t.ctx.Err(); err != nil {
		return err // not sent: the tie to ctx may not have rolled it back yet
	}
	return t.Tx.Commit()
}

func (t *lateTx) Rollback() error {
	defer t.done()
	return t.Tx.Rollback()
}

// done lets the transaction's context go, once it has ended.
func (t *lateTx) done() {
	t.follow()
	t.cancel()
}

// isLate reports whether this order, which is about to commit, is one the
// late-commit fault holds back: in this process, the product's first order
// to reach its commit, then every LateCommitEvery-th after it. Counting
// rather than drawing makes the fault hit every run alike.
func (s *Service) isLate(p stock.Product) bool {
	if p.LateCommit <= 0 {
		return false
	}
	every := int64(max(p.LateCommitEvery, 1))
	n := s.events(p.ID).commits.Add(1)
	return (n-1)%every == 0
}
