package orderdb

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/google/uuid"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// rollbackFirstPool lets database/sql's rollback on cancel win the race
// with COMMIT: its transactions' Commit cancels the context, waits until
// database/sql has rolled the transaction back, and only then commits.
type rollbackFirstPool struct {
	gorm.ConnPool
	cancel func()
}

func (r *rollbackFirstPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := r.ConnPool.(gorm.TxBeginner).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &rollbackFirstTx{Tx: tx, cancel: r.cancel}, nil
}

type rollbackFirstTx struct {
	*sql.Tx
	cancel func()
}

func (r *rollbackFirstTx) Commit() error {
	r.cancel()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) { // until database/sql has rolled back
		if _, err := r.Tx.ExecContext(context.Background(), "SELECT 1"); errors.Is(err, sql.ErrTxDone) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return r.Tx.Commit()
}

// TestCommitNeverSentIsNotInDoubt: a context that ends after the
// statements ran and before COMMIT, where database/sql's rollback on
// cancel comes first, leaves no order, and its error says so: it is no
// *commitError, and AfterFailure does not call the order in doubt.
func TestCommitNeverSentIsNotInDoubt(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		db := b.DB.DB()
		w := NewWriter(db, nil)
		p, err := stock.NewStore(db).Create(context.Background(), stock.Product{ID: b.Redis.Key("commit-never-sent"),
			Strategy: strategy.SQLAtomic, Stock: 5})
		if err != nil {
			t.Fatal(err)
		}
		o := Order{ID: uuid.NewString(), UserID: "u", ProductID: p.ID, Quantity: 1, Strategy: p.Strategy,
			CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rb := db.WithContext(context.Background())
		rb.Statement.ConnPool = &rollbackFirstPool{ConnPool: rb.Statement.ConnPool, cancel: cancel}
		err = transact(ctx, rb, func(tx *gorm.DB) error { return Insert(tx, o) })
		if found, qerr := w.Landed(context.Background(), o.ID); qerr != nil || found {
			t.Fatalf("order landed: %v, %v; want it rolled back", found, qerr)
		}
		if ce := (*commitError)(nil); errors.As(err, &ce) {
			t.Errorf("transact: %v is a *commitError, but the COMMIT was never sent", err)
		}
		if got := w.AfterFailure(ctx, o, err); errors.Is(got, ErrInDoubt) {
			t.Errorf("AfterFailure: %v, want no ErrInDoubt for a COMMIT never sent", got)
		}
	})
}
