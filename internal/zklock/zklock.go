// Package zklock owns the ZooKeeper lock: ZooKeeper's lock recipe (as
// Apache Curator's InterProcessMutex implements it) with dlock's handles.
//
// Each acquisition creates an ephemeral sequential node in the key's
// directory; the lowest number holds the lock, and a waiter watches only
// the node just before its own (queue.go). Release deletes the node. The
// create is protected (enter.go): the node's name carries a fresh id, so a
// lost answer never leaves a second, orphan node blocking the key.
//
// The session is the lease (session.go): nothing is renewed per lock, and
// once the client's own count says the session may have expired, every
// handle's Context is cancelled (cause wrapping dlock.ErrNotHeld). The
// fence is the node's creation zxid, beside the ensemble's epoch (epoch.go).
// One Locker is one client and one session: its locks and waiters live and
// die with it.
package zklock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flashsale/flashsale/internal/dlock"
)

// Mode is the name of this lock among dlock's modes. dlock.New does not
// build it: it needs an ensemble (New).
const Mode dlock.Mode = "zookeeper"

// DefaultRoot is the znode under which a Locker keeps its locks unless
// Options.Root says otherwise.
const DefaultRoot = "/flashsale/dlock"

// DefaultSessionTimeout is the session timeout a Locker asks for unless
// Options.SessionTimeout says otherwise.
const DefaultSessionTimeout = 2 * time.Second

// Errors of this package; the others are dlock's (ErrTimeout,
// ErrNotObtained, ErrNotHeld, ErrUnavailable).
var (
	// ErrClosed is returned by a Locker's methods after Close, and is the
	// cause of every handle's Context that Close cancelled.
	ErrClosed = errors.New("zklock: locker closed")
	// ErrConfig is wrapped by New's error for servers or options that
	// cannot work.
	ErrConfig = errors.New("zklock: bad configuration")
)

// Options configure a Locker. The zero value asks for the defaults.
type Options struct {
	// SessionTimeout is the lease of every lock the Locker holds: a holder
	// that stops keeps its locks this long. The ensemble bounds it to 2..20
	// ticks; the granted one counts (Locker.SessionTimeout). Zero means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Root is the znode under which the locks live (Root/locks/<key>/,
	// Root/epoch). Zero means DefaultRoot.
	Root string
	// Logger hears the client's own messages (connections made and lost)
	// at debug level. Nil discards them.
	Logger *slog.Logger
}

// Locker takes locks on an ensemble, through one client and one session.
// Locker takes locks on an ensemble, through one client and one session.
// It implements dlock.Locker; all its methods are safe for concurrent use,
// but Observe must come first. The lease is the session timeout for every
// lock: ttl is checked, otherwise unused, and HoldRenewals does nothing.
type Locker struct {
	conn     *zk.Conn
	root     string
	sessions *tracker
	obs      dlock.Observer // nil: nobody listens (see Observe)

	// Clean-ups that outlive the call that needed them (later): they run
	// under bgCtx, which Close cancels, and Close waits for them.
	bgCtx     context.Context
	bgCancel  context.CancelFunc
	bg        sync.WaitGroup
	bgMu      sync.Mutex
	bgClosed  bool // guarded by bgMu: no more clean-ups start
	closeOnce sync.Once
}

var _ dlock.Locker = (*Locker)(nil)

// New connects to the ensemble at servers (host:port each) and returns once
// it has a session; dlock.ErrUnavailable if none came before ctx ended,
// ErrConfig for servers or options that cannot work. Close it when done.
func New(ctx context.Context, servers []string, opts Options) (*Locker, error) {
	if err := checkServers(servers); err != nil {
		return nil, err
	}
	if opts.Root == "" {
		opts.Root = DefaultRoot
	}
	if err := checkRoot(opts.Root); err != nil {
		return nil, err
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.SessionTimeout < 0 {
		return nil, fmt.Errorf("%w: session timeout %v", ErrConfig, opts.SessionTimeout)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	handshake := opts.SessionTimeout / time.Duration(len(servers))
	m := &Locker{root: opts.Root, sessions: newTracker(handshake)}
	m.bgCtx, m.bgCancel = context.WithCancel(context.Background())
	conn, _, err := zk.Connect(servers, opts.SessionTimeout,
		zk.WithDialer(m.sessions.dial), zk.WithLogger(zkLogger{log}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	m.conn = conn
	if _, err := m.sessions.awaitLive(ctx); err != nil {
		m.Close()
		return nil, fmt.Errorf("%w: no ZooKeeper member of %s gave a session: %w",
			dlock.ErrUnavailable, strings.Join(servers, ","), err)
	}
	return m, nil
}

// SessionTimeout returns the session timeout the ensemble granted the
// current session (0 before the first). Safe for concurrent use.
func (m *Locker) SessionTimeout() time.Duration {
	if s := m.sessions.current(); s != nil {
		return s.timeout
	}
	return 0
}

// Ready returns nil if the ensemble answers a read within ctx (a member
// that has lost its quorum does not serve), and an error wrapping
// dlock.ErrUnavailable otherwise: for a readiness check. Safe for
// concurrent use.
func (m *Locker) Ready(ctx context.Context) error {
	if m.closed() {
		return ErrClosed
	}
	if _, err := m.stat(ctx, "/"); err != nil {
		return fmt.Errorf("%w: ZooKeeper: %w", dlock.ErrUnavailable, err)
	}
	return nil
}

// Observe makes m report each time a waiting Lock looks at the queue again
// (dlock.Observe). Call it before m's first use.
func (m *Locker) Observe(o dlock.Observer) { m.obs = o }

func (m *Locker) retried() {
	if m.obs != nil {
		m.obs.Retried()
	}
}

// Close ends the session, which deletes its nodes: its locks are free, and
// every handle's Context is cancelled with ErrClosed (Release then answers
// dlock.ErrNotHeld). It waits for background clean-ups; again, it does nothing.
func (m *Locker) Close() error {
	m.closeOnce.Do(func() {
		m.bgCancel()
		m.sessions.close()
		if m.conn != nil {
			m.conn.Close()
		}
		m.bgMu.Lock()
		m.bgClosed = true
		m.bgMu.Unlock()
		m.bg.Wait()
	})
	return nil
}

// later runs fn in the background, unless Close has begun (then the
// session is ending, and the nodes fn would clean up go with it). Close
// waits for it.
func (m *Locker) later(fn func()) {
	m.bgMu.Lock()
	defer m.bgMu.Unlock()
	if !m.bgClosed {
		m.bg.Go(fn)
	}
}

// closed reports whether Close has been called.
func (m *Locker) closed() bool { return m.bgCtx.Err() != nil }

// checkServers rejects a list with no member, or a member without a port
// (the client would quietly try ZooKeeper's default port).
func checkServers(servers []string) error {
	if len(servers) == 0 {
		return fmt.Errorf("%w: no ZooKeeper servers", ErrConfig)
	}
	for _, s := range servers {
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("%w: ZooKeeper server %q is not host:port", ErrConfig, s)
		}
	}
	return nil
}

// checkRoot rejects a root that is not an absolute znode path.
func checkRoot(root string) error {
	if !strings.HasPrefix(root, "/") || strings.HasSuffix(root, "/") || strings.Contains(root, "//") {
		return fmt.Errorf("%w: root %q is not a znode path like /a/b", ErrConfig, root)
	}
	return nil
}

// zkLogger hands the client's messages to a slog.Logger.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf(format, args...), "component", "zookeeper client")
}
