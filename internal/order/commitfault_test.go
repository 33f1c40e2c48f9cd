package order_test

// A driver.Connector wrapper for the in-doubt tests: it can make a COMMIT
// land and then report a lost connection (the answer was lost), and it can
// take the database "down" (every new statement fails) at that moment.

import (
	"context"
	"database/sql/driver"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/testenv"
)

var errConnReset = &net.OpError{Op: "read", Net: "tcp",
	Err: os.NewSyscallError("read", syscall.ECONNRESET)}

type commitFault struct {
	down atomic.Bool
	// loseCommitAnswer: the next successful COMMIT returns errConnReset;
	// downAfterCommit: and the database goes down right after it.
	loseCommitAnswer atomic.Bool
	downAfterCommit  atomic.Bool
	commitsLost      atomic.Int64
}

type faultConnector struct {
	inner driver.Connector
	f     *commitFault
}

func (c *faultConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.f.down.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &faultConn{inner: conn, f: c.f}, nil
}
func (c *faultConnector) Driver() driver.Driver { return c.inner.Driver() }

type faultConn struct {
	inner driver.Conn
	f     *commitFault
}

func (c *faultConn) check() error {
	if c.f.down.Load() {
		return driver.ErrBadConn
	}
	return nil
}
func (c *faultConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}
func (c *faultConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if pc, ok := c.inner.(driver.ConnPrepareContext); ok {
		return pc.PrepareContext(ctx, q)
	}
	return c.inner.Prepare(q)
}
func (c *faultConn) Close() error { return c.inner.Close() }
func (c *faultConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c *faultConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	tx, err := c.inner.(driver.ConnBeginTx).BeginTx(ctx, o)
	if err != nil {
		return nil, err
	}
	return &faultTx{inner: tx, f: c.f}, nil
}
func (c *faultConn) ExecContext(ctx context.Context, q string, a []driver.NamedValue) (driver.Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if ec, ok := c.inner.(driver.ExecerContext); ok {
		return ec.ExecContext(ctx, q, a)
	}
	return nil, driver.ErrSkip
}
func (c *faultConn) QueryContext(ctx context.Context, q string, a []driver.NamedValue) (driver.Rows, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if qc, ok := c.inner.(driver.QueryerContext); ok {
		return qc.QueryContext(ctx, q, a)
	}
	return nil, driver.ErrSkip
}
func (c *faultConn) Ping(ctx context.Context) error {
	if err := c.check(); err != nil {
		return err
	}
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}
func (c *faultConn) ResetSession(ctx context.Context) error {
	if err := c.check(); err != nil {
		return err
	}
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}
func (c *faultConn) IsValid() bool {
	if c.f.down.Load() {
		return false
	}
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}
func (c *faultConn) CheckNamedValue(nv *driver.NamedValue) error {
	if nc, ok := c.inner.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type faultTx struct {
	inner driver.Tx
	f     *commitFault
}

func (t *faultTx) Commit() error {
	if t.f.down.Load() {
		t.inner.Rollback()
		return errConnReset
	}
	if err := t.inner.Commit(); err != nil {
		return err
	}
	if t.f.loseCommitAnswer.CompareAndSwap(true, false) {
		t.f.commitsLost.Add(1)
		if t.f.downAfterCommit.Load() {
			t.f.down.Store(true)
		}
		return errConnReset // it landed, but the client never heard
	}
	return nil
}
func (t *faultTx) Rollback() error { return t.inner.Rollback() }

// faultyDB opens a second pool on b's database, through the fault wrapper.
func faultyDB(t *testing.T, b *testenv.Env) (*gorm.DB, *commitFault) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f := &commitFault{}
	wrap := func(c driver.Connector) driver.Connector { return &faultConnector{inner: c, f: f} }
	var db *gorm.DB
	var err error
	if b.DB.Mode() == testenv.Real {
		db, err = database.OpenMySQL(ctx, b.DB.DSN(), database.WithConnector(wrap), database.WithMaxOpenConns(8))
	} else {
		db, err = database.OpenSQLite(ctx, b.DB.Path(), database.WithConnector(wrap))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			s.Close()
		}
	})
	return db, f
}

func runtimeNumGoroutine() int { return runtime.NumGoroutine() }
