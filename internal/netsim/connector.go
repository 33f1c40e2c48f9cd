package netsim

import (
	"context"
	"database/sql/driver"
	"time"
)

// SQLite runs in the shop's process: no network to delay. The connector
// below stands in for one: it waits the DB link's RTT once for each round
// trip a MySQL client makes (each Exec, Query, Prepare, Begin, Commit,
// Rollback and Ping), then lets the driver do the work. Reading a query's
// rows costs no further round trip, as MySQL streams them.

// Connector wraps inner so that every round trip waits the DB link's RTT.
// With a nil n or no RTT on the DB link it returns inner itself. It fits
// database.WithConnector. The wrapped connector is safe for concurrent use
// as inner is; a wait ends early with ctx's error where the call has one.
func (n *Network) Connector(inner driver.Connector) driver.Connector {
	rtt := n.RTT().Of(DB)
	if rtt == 0 {
		return inner
	}
	return &delayConnector{inner: inner, rtt: rtt}
}

type delayConnector struct {
	inner driver.Connector
	rtt   time.Duration
}

func (c *delayConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &delayConn{inner: conn, rtt: c.rtt}, nil
}

func (c *delayConnector) Driver() driver.Driver { return c.inner.Driver() }

// trip waits one round trip, or until ctx is done.
func trip(ctx context.Context, rtt time.Duration) error {
	t := time.NewTimer(rtt)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// delayConn implements the optional interfaces the drivers here have,
// answering driver.ErrSkip (without a wait) where inner lacks one, so
// database/sql falls back to a path that waits once.
type delayConn struct {
	inner driver.Conn
	rtt   time.Duration
}

func (c *delayConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *delayConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := trip(ctx, c.rtt); err != nil {
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
	return &delayStmt{inner: s, rtt: c.rtt}, nil
}

func (c *delayConn) Close() error { return c.inner.Close() }

func (c *delayConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *delayConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := trip(ctx, c.rtt); err != nil {
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
	return &delayTx{inner: tx, rtt: c.rtt}, nil
}

func (c *delayConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ec, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if err := trip(ctx, c.rtt); err != nil {
		return nil, err
	}
	return ec.ExecContext(ctx, query, args)
}

func (c *delayConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	qc, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if err := trip(ctx, c.rtt); err != nil {
		return nil, err
	}
	return qc.QueryContext(ctx, query, args)
}

func (c *delayConn) Ping(ctx context.Context) error {
	if err := trip(ctx, c.rtt); err != nil {
		return err
	}
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *delayConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *delayConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *delayConn) CheckNamedValue(nv *driver.NamedValue) error {
	if nc, ok := c.inner.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// delayTx waits a round trip for its COMMIT or ROLLBACK.
type delayTx struct {
	inner driver.Tx
	rtt   time.Duration
}

func (t *delayTx) Commit() error {
	time.Sleep(t.rtt)
	return t.inner.Commit()
}

func (t *delayTx) Rollback() error {
	time.Sleep(t.rtt)
	return t.inner.Rollback()
}

// delayStmt waits a round trip for each execution of a prepared statement.
type delayStmt struct {
	inner driver.Stmt
	rtt   time.Duration
}

func (s *delayStmt) Close() error  { return s.inner.Close() }
func (s *delayStmt) NumInput() int { return s.inner.NumInput() }

func (s *delayStmt) Exec(args []driver.Value) (driver.Result, error) {
	time.Sleep(s.rtt)
	return s.inner.Exec(args) //nolint:staticcheck // only reached by drivers without ExecContext
}

func (s *delayStmt) Query(args []driver.Value) (driver.Rows, error) {
	time.Sleep(s.rtt)
	return s.inner.Query(args) //nolint:staticcheck // only reached by drivers without QueryContext
}

func (s *delayStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := trip(ctx, s.rtt); err != nil {
		return nil, err
	}
	if ec, ok := s.inner.(driver.StmtExecContext); ok {
		return ec.ExecContext(ctx, args)
	}
	return s.inner.Exec(values(args)) //nolint:staticcheck // driver without StmtExecContext
}

func (s *delayStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := trip(ctx, s.rtt); err != nil {
		return nil, err
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
