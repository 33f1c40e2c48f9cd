package order_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// gaveUp is a slog handler that closes its channel at payRedis's warning
// that a return to Redis failed: the settle's Redis call has returned.
type gaveUp struct {
	once *sync.Once
	ch   chan struct{}
}

func (h gaveUp) Enabled(context.Context, slog.Level) bool { return true }
func (h gaveUp) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "return the units to redis") {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}
func (h gaveUp) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h gaveUp) WithGroup(string) slog.Handler      { return h }

// TestRedisSettleHoldsTheRowWhileItsReturnIsInFlight: settleOwed holds
// the owed row "while it sends Redis the return", so that no other shop
// settles (re-sends, deletes) it meanwhile. But its transaction runs on
// the same context as the Redis call, and database/sql rolls a
// transaction back the moment its context ends: with Redis silent, the
// row is free at payRedis's deadline (orderdb.ReleaseTimeout) while the
// return is still on its way (here, seconds later). Another shop may
// then re-send and delete the row, a load miss it, and the late return
// count it twice.
func TestRedisSettleHoldsTheRowWhileItsReturnIsInFlight(t *testing.T) {
	testenv.Backends(t, func(t *testing.T, b *testenv.Env) {
		if b.DB.DB().Dialector.Name() == "sqlite" {
			t.Skip("FOR UPDATE NOWAIT: MySQL and MariaDB")
		}
		ctx := context.Background()
		h := gaveUp{once: new(sync.Once), ch: make(chan struct{})}
		shop := newShops(t, b, 1, order.Options{SweepEvery: -1, Logger: slog.New(h)})[0]
		p := payable(t, b, stock.Product{Strategy: strategy.RedisDecr}, 4, time.Minute)
		o := placeWritten(ctx, t, shop, p, "u1")
		for i := range b.Redis.Len() { // Redis goes silent
			b.Redis.SetDelay(i, time.Minute)
		}
		cancelled := make(chan struct{})
		t.Cleanup(func() {
			for i := range b.Redis.Len() {
				b.Redis.SetDelay(i, 0)
			}
			<-cancelled
		})
		go func() {
			defer close(cancelled)
			_, _ = shop.Cancel(ctx, o.ID)
		}()
		testenv.WaitFor(t, 10*time.Second, "the cancel's commit", func() bool { return rowsOwed(t, b, p, true) == 1 })
		// Another shop's try at the row (it holds the row for the try).
		free := func() bool {
			tx := b.DB.DB().Begin()
			defer tx.Rollback()
			var id string
			return tx.Raw("SELECT order_id FROM redis_owed WHERE order_id = ? FOR UPDATE NOWAIT", o.ID).Row().Scan(&id) == nil
		}
		// The settle takes the row in its own transaction after the
		// cancel's commit, and skips it if it is locked (SKIP LOCKED): the
		// tries wait until it holds the row, seen without taking a lock,
		// or until its send has given up (on a loaded machine the hold,
		// orderdb.ReleaseTimeout at most, can end between two looks).
		testenv.WaitFor(t, 10*time.Second, "the settle holding the row, or its send given up", func() bool {
			select {
			case <-h.ch:
				return true
			default:
			}
			var n int
			err := b.DB.DB().Raw("SELECT COUNT(*) FROM information_schema.INNODB_TRX t " +
				"JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id " +
				"WHERE p.DB = DATABASE() AND t.trx_rows_locked > 0").Row().Scan(&n)
			return err == nil && n > 0
		})
		testenv.WaitFor(t, 30*time.Second, "the row free", free)
		select {
		case <-h.ch:
		default:
			t.Errorf("the owed row was free while its settle's return to Redis was still in flight")
		}
	})
}
