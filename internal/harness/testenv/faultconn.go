package testenv

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
)

// faultAddr names the "server" in the errors of an injected fault, so a
// log line says where the fault came from.
type faultAddr string

func (faultAddr) Network() string  { return "tcp" }
func (a faultAddr) String() string { return string(a) }

// Errors returned while an embedded database is stopped, and for a COMMIT
// whose answer a CommitFault lost. They are the errors a client gets from
// a dead MySQL server — a *net.OpError wrapping ECONNREFUSED (new
// connections) or ECONNRESET (a commit on a connection that was open) — so
// code that classifies connection failures with errors.Is / errors.As
// treats them as it would treat the real thing.
var (
	errDBStopped = &net.OpError{Op: "dial", Net: "tcp", Addr: faultAddr("sqlite(stopped by testenv)"),
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	errDBReset = &net.OpError{Op: "read", Net: "tcp", Addr: faultAddr("sqlite(stopped by testenv)"),
		Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	errAnswerLost = &net.OpError{Op: "read", Net: "tcp", Addr: faultAddr("database(commit landed, answer lost by testenv)"),
		Err: os.NewSyscallError("read", syscall.ECONNRESET)}
)

// faultConnector wraps a driver.Connector so that, while down is set, the
// database behaves as if its server were gone: new connections fail,
// pooled connections report themselves broken (database/sql throws them
// away and dials again, which fails), and statements, commits and pings on
// connections already checked out fail. A transaction begun before the
// fault cannot commit during it; it is rolled back underneath, as the
// server would on a lost connection. This is how SQLite, which has no
// network to cut, gets the same faults as MySQL behind a Proxy. With a
// CommitFault (commit, nil for none), COMMITs may also lose their answers.
type faultConnector struct {
	inner  driver.Connector
	down   *atomic.Bool
	commit *CommitFault
}

func (c *faultConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.down.Load() {
		return nil, errDBStopped
	}
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &faultConn{inner: conn, down: c.down, commit: c.commit}, nil
}

func (c *faultConnector) Driver() driver.Driver { return c.inner.Driver() }

// faultConn forwards to the driver's connection unless the fault is on. It
// implements the optional interfaces the SQLite driver has, falling back to
// driver.ErrSkip where the wrapped connection lacks one.
type faultConn struct {
	inner  driver.Conn
	down   *atomic.Bool
	commit *CommitFault
	// pending is closed once a COMMIT whose answer was lost early has
	// landed on inner (CommitFault.LoseNextAnswerEarly); nil if none.
	pending chan struct{}
}

// check returns driver.ErrBadConn while down: nothing was sent, so
// database/sql may retry on a new connection, whose Connect then fails.
func (c *faultConn) check() error {
	if c.down.Load() || c.pending != nil {
		return driver.ErrBadConn
	}
	return nil
}

func (c *faultConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *faultConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var s driver.Stmt
	var err error
	if pc, ok := c.inner.(driver.ConnPrepareContext); ok {
		s, err = pc.PrepareContext(ctx, query)
	} else {
		s, err = c.inner.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &faultStmt{inner: s, down: c.down}, nil
}

// Close closes the connection, once a COMMIT still landing on it has.
func (c *faultConn) Close() error {
	if p := c.pending; p != nil {
		go func() { <-p; c.inner.Close() }()
		return nil
	}
	return c.inner.Close()
}

func (c *faultConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *faultConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var tx driver.Tx
	var err error
	if bc, ok := c.inner.(driver.ConnBeginTx); ok {
		tx, err = bc.BeginTx(ctx, opts)
	} else {
		tx, err = c.inner.Begin() //nolint:staticcheck // fallback for old drivers
	}
	if err != nil {
		return nil, err
	}
	return &faultTx{inner: tx, down: c.down, commit: c.commit, conn: c}, nil
}

func (c *faultConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if ec, ok := c.inner.(driver.ExecerContext); ok {
		return ec.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *faultConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	qc, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if isCall(query) {
		if err := c.commit.call(c, func() error { return drain(qc.QueryContext(context.Background(), query, args)) }); err != nil {
			return nil, err
		}
	}
	return qc.QueryContext(ctx, query, args)
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

// ResetSession and IsValid make database/sql drop pooled connections while
// the fault is on, so none survives it unnoticed.
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
	if c.down.Load() || c.pending != nil {
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

// faultTx refuses to commit while down, and rolls back underneath instead;
// a COMMIT that landed may lose its answer (CommitFault).
type faultTx struct {
	inner  driver.Tx
	down   *atomic.Bool
	commit *CommitFault
	conn   *faultConn
}

func (t *faultTx) Commit() error {
	if t.down.Load() {
		t.inner.Rollback()
		return errDBReset
	}
	if t.commit.early(t) {
		return errAnswerLost
	}
	if err := t.inner.Commit(); err != nil {
		return err
	}
	return t.commit.landed()
}

func (t *faultTx) Rollback() error { return t.inner.Rollback() }

// faultStmt fails statements prepared before the fault.
type faultStmt struct {
	inner driver.Stmt
	down  *atomic.Bool
}

func (s *faultStmt) Close() error  { return s.inner.Close() }
func (s *faultStmt) NumInput() int { return s.inner.NumInput() }

func (s *faultStmt) Exec(args []driver.Value) (driver.Result, error) {
	if s.down.Load() {
		return nil, driver.ErrBadConn
	}
	return s.inner.Exec(args) //nolint:staticcheck // only reached by drivers without ExecContext
}

func (s *faultStmt) Query(args []driver.Value) (driver.Rows, error) {
	if s.down.Load() {
		return nil, driver.ErrBadConn
	}
	return s.inner.Query(args) //nolint:staticcheck // only reached by drivers without QueryContext
}

func (s *faultStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.down.Load() {
		return nil, driver.ErrBadConn
	}
	if ec, ok := s.inner.(driver.StmtExecContext); ok {
		return ec.ExecContext(ctx, args)
	}
	return s.inner.Exec(values(args)) //nolint:staticcheck // driver without StmtExecContext
}

func (s *faultStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if s.down.Load() {
		return nil, driver.ErrBadConn
	}
	if qc, ok := s.inner.(driver.StmtQueryContext); ok {
		return qc.QueryContext(ctx, args)
	}
	return s.inner.Query(values(args)) //nolint:staticcheck // driver without StmtQueryContext
}

func values(args []driver.NamedValue) []driver.Value {
	v := make([]driver.Value, len(args))
	for i, a := range args {
		v[i] = a.Value
	}
	return v
}

// isCall reports whether query calls a stored procedure.
func isCall(query string) bool {
	q := strings.TrimSpace(query)
	return len(q) > 5 && strings.EqualFold(q[:5], "CALL ")
}

// drain reads rows to the end and closes them: a CALL's answer, read.
func drain(rows driver.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
