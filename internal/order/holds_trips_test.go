package order_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
)

// The round trips of a test's shop, in the order they were sent, on every
// link, with the product lock's grant and release among them: what
// holds_test.go counts a hold's round trips in. A trip is logged as it is
// sent; a lock's grant once it has come, its release once it is done.

// trip is one entry of a tripLog: a round trip on link (node is which of
// a link's servers, for Redis), or a lock event (link "lock").
type trip struct {
	link string
	node int
	what string
}

// tripLog is safe for concurrent use.
type tripLog struct {
	mu    sync.Mutex
	trips []trip
}

func (l *tripLog) add(link string, node int, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trips = append(l.trips, trip{link: link, node: node, what: strings.Join(strings.Fields(what), " ")})
}

// since returns the trips logged from i on.
func (l *tripLog) since(i int) []trip {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]trip(nil), l.trips[i:]...)
}

func (l *tripLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.trips)
}

// redisTrips is a go-redis hook that logs each command, and each pipeline
// as one trip, of the client of node.
type redisTrips struct {
	log  *tripLog
	node int
}

func (h redisTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h redisTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.log.add("redis", h.node, fmt.Sprint(cmd.Args()))
		return next(ctx, cmd)
	}
}

func (h redisTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.log.add("redis", h.node, "pipeline")
		return next(ctx, cmds)
	}
}

// etcdTrips logs each unary call of an etcd client (the lease's keep-alive
// is a stream, and not a trip of the order's).
func etcdTrips(log *tripLog) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
		cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		log.add("etcd", 0, method)
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

// dbTrips wraps a database driver's connector so that every round trip a
// MySQL client makes is logged, by the rule netsim's connector delays
// them by: each Exec, Query, Prepare, BEGIN, COMMIT and ROLLBACK is one;
// reading a query's rows is none.
func dbTrips(log *tripLog) func(driver.Connector) driver.Connector {
	return func(c driver.Connector) driver.Connector { return &tripConnector{inner: c, log: log} }
}

type tripConnector struct {
	inner driver.Connector
	log   *tripLog
}

func (c *tripConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tripConn{Conn: conn, log: c.log}, nil
}

func (c *tripConnector) Driver() driver.Driver { return c.inner.Driver() }

// tripConn answers driver.ErrSkip where its driver lacks an interface, so
// database/sql falls back to a path that is logged once.
type tripConn struct {
	driver.Conn
	log *tripLog
}

func (c *tripConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.log.add("db", 0, "PREPARE "+query)
	var s driver.Stmt
	var err error
	if pc, ok := c.Conn.(driver.ConnPrepareContext); ok {
		s, err = pc.PrepareContext(ctx, query)
	} else {
		s, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &tripStmt{Stmt: s, log: c.log, query: query}, nil
}

func (c *tripConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.log.add("db", 0, "BEGIN")
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &tripTx{Tx: tx, log: c.log}, nil
}

func (c *tripConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ec, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.log.add("db", 0, query)
	return ec.ExecContext(ctx, query, args)
}

func (c *tripConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	qc, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.log.add("db", 0, query)
	return qc.QueryContext(ctx, query, args)
}

func (c *tripConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *tripConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *tripConn) CheckNamedValue(nv *driver.NamedValue) error {
	if nc, ok := c.Conn.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type tripTx struct {
	driver.Tx
	log *tripLog
}

func (t *tripTx) Commit() error {
	t.log.add("db", 0, "COMMIT")
	return t.Tx.Commit()
}

func (t *tripTx) Rollback() error {
	t.log.add("db", 0, "ROLLBACK")
	return t.Tx.Rollback()
}

type tripStmt struct {
	driver.Stmt
	log   *tripLog
	query string
}

func (s *tripStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.log.add("db", 0, s.query)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *tripStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.log.add("db", 0, s.query)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
