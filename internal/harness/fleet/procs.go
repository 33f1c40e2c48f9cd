package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/porthold"
)

// A process fleet runs each shop as a child process: this program
// re-executed with childShopEnv set (child.go is the child's side).
// It is what --crash needs, a shop that can be SIGKILLed in the middle of
// a sale, and nothing else differs: the children reach the parent's
// embedded Redis nodes and etcd members over loopback, as the in-process
// shops do, and open the same SQLite file (WAL mode and the busy timeout
// work across processes, database/sqlite.go), or the same real servers.
//
// No child outlives the parent. Close kills every child by its pid; on
// Linux the kernel SIGKILLs a child whose parent died (Pdeathsig), and on
// every platform a child exits once its standard input, a pipe from the
// parent, reaches EOF, which it does when the parent dies. Children run in
// a process group of their own, so a Ctrl-C in the terminal reaches the
// parent alone, which then stops them.
//
// A child's standard output and error go to shop-<n>.log in the fleet's
// log folder (each start adds a header line with its pid), and their last
// lines are kept in memory for the error of a child that fails to start.

// Shop process limits: how long a child may take to answer /readyz, how
// often it is asked, how long a stopped child may take to shut down before
// it is killed, and how much of its output is kept for errors.
const (
	shopReadyWithin = 30 * time.Second
	shopReadyEvery  = 20 * time.Millisecond
	shopStopWithin  = 5 * time.Second
	shopTailBytes   = 4096
)

// shopProcs is a fleet's child shops. Its methods are safe for concurrent
// use, but one shop must not be killed or restarted by two callers at once
// (the crash driver is the only one that does either, one shop at a time).
type shopProcs struct {
	exe    string
	base   childConfig // every child's, but Shop and Addr
	logDir string      // "" discards the output but for the tail
	ready  *http.Client

	mu        sync.Mutex
	shops     []*shopProc
	reapedCPU time.Duration // CPU of the children that exited
}

// shopProc is one shop: its address (fixed for the fleet's life) and its
// current process.
type shopProc struct {
	n    int // from 1
	addr string
	hold *porthold.Held // the port, while no child listens on it

	cmd    *exec.Cmd
	stdin  io.WriteCloser // closing it tells the child its parent is gone
	exited chan struct{}  // closed once the process has been waited for
	log    io.Closer
	tail   *tailWriter
}

// startShopProcs starts n child shops on free loopback ports and waits for
// each to answer /readyz. On error every child started is stopped.
func startShopProcs(ctx context.Context, n int, base childConfig, logDir string) (_ *shopProcs, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("fleet: shop processes: this program's path: %w", err)
	}
	p := &shopProcs{exe: exe, base: base, logDir: logDir, ready: &http.Client{Timeout: time.Second}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	for i := range n {
		addr, hold, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &shopProc{n: i + 1, addr: addr, hold: hold}
		p.shops = append(p.shops, s)
		if err := p.start(ctx, s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// freePort finds a free loopback port and holds it (package porthold) for
// a child to listen on.
func freePort() (string, *porthold.Held, error) {
	ports, err := porthold.Free(1)
	if err != nil {
		return "", nil, fmt.Errorf("fleet: shop port: %w", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	hold, _ := porthold.Hold(addr) // without one (not a Unix), the port is left to chance
	return addr, hold, nil
}

// targets are the shops' base URLs, in shop order.
func (p *shopProcs) targets() []string {
	out := make([]string, len(p.shops))
	for i, s := range p.shops {
		out[i] = "http://" + s.addr
	}
	return out
}

// start starts s's process and waits until it answers /readyz, then lets
// go of the port's hold. A child that exits first, or is not ready within
// shopReadyWithin, is an error that quotes its last lines of output.
func (p *shopProcs) start(ctx context.Context, s *shopProc) error {
	c := p.base
	c.Shop, c.Addr = s.n, s.addr
	desc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.exe)
	cmd.Env = append(os.Environ(), childShopEnv+"="+string(desc))
	cmd.SysProcAttr = childProcAttr()
	s.tail = &tailWriter{max: shopTailBytes}
	var out io.Writer = s.tail
	s.log = nopCloser{}
	if p.logDir != "" {
		f, err := os.OpenFile(filepath.Join(p.logDir, fmt.Sprintf("shop-%d.log", s.n)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("fleet: shop %d log: %w", s.n, err)
		}
		out, s.log = io.MultiWriter(f, s.tail), f
	}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		s.log.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		s.log.Close()
		return fmt.Errorf("fleet: start shop %d: %w", s.n, err)
	}
	fmt.Fprintf(out, "--- shop %d started, pid %d, at %s\n", s.n, cmd.Process.Pid, time.Now().Format(time.RFC3339Nano))
	s.cmd, s.stdin, s.exited = cmd, stdin, make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		p.mu.Lock()
		p.reapedCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		p.mu.Unlock()
		close(exited)
	}(cmd, s.exited)

	ctx, cancel := context.WithTimeout(ctx, shopReadyWithin)
	defer cancel()
	// The child binds the port itself (SO_REUSEADDR lets it past the
	// hold); connections are refused until it does.
	ready := p.awaitReady(ctx, s)
	if !ready {
		why := "did not answer /readyz within " + shopReadyWithin.String()
		select {
		case <-s.exited:
			why = "exited: " + s.cmd.ProcessState.String()
		default:
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				why = "stopped waiting: " + ctx.Err().Error()
			}
		}
		return fmt.Errorf("fleet: shop %d (pid %d) on %s %s; its last lines:\n%s", s.n, cmd.Process.Pid, s.addr, why, s.tail.lines(20))
	}
	s.hold.Release()
	s.hold = nil
	return nil
}

// awaitReady asks s's /readyz every shopReadyEvery until it answers 200;
// it reports false if s's process exits or ctx ends first.
func (p *shopProcs) awaitReady(ctx context.Context, s *shopProc) bool {
	t := time.NewTicker(shopReadyEvery)
	defer t.Stop()
	for !p.isReady(ctx, s.addr) {
		select {
		case <-t.C:
		case <-s.exited:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// isReady asks addr's /readyz once.
func (p *shopProcs) isReady(ctx context.Context, addr string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := p.ready.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// startProcessShops is StartFleet's last step for a process fleet: n child
// shops on b, described by acfg, their Close added to closers, and the
// fleet's targets, CPU meter and procs set.
func startProcessShops(ctx context.Context, f *Fleet, n int, acfg app.Config, cfg FleetConfig, b *app.Backends, closers *[]func() error) error {
	base := childConfig{
		MySQLDSN: cfg.MySQLDSN, RedisAddrs: b.RedisAddrs, EtcdEndpoints: b.EtcdEndpoints, ZooKeeper: b.ZooKeeper,
		Sentinels: b.RedisMaster.Sentinels, Master: b.RedisMaster.Name, Cluster: b.RedisCluster,
		AdminToken: acfg.AdminToken, LockWaitMs: acfg.LockWait.Milliseconds(),
		MaxInFlight: acfg.MaxInFlightOrders, BuyerRate: acfg.BuyerRate, BuyerBurst: acfg.BuyerBurst, BuyerSecret: acfg.BuyerSecret,
	}
	if rtt := b.Net.RTT(); !rtt.IsZero() {
		base.RTT = rtt.String()
	}
	switch {
	case b.SQLite != nil:
		base.SQLitePath, base.MySQLDSN = b.SQLite.Path, ""
	case cfg.SQLitePath != "":
		base.SQLitePath, base.MySQLDSN = cfg.SQLitePath, ""
	}
	if base.SQLitePath == "" && base.MySQLDSN == "" {
		return errors.New("fleet: shop processes need the embedded SQLite file or a MySQL DSN to open")
	}
	procs, err := startShopProcs(ctx, n, base, cfg.LogDir)
	if err != nil {
		return err
	}
	*closers = append(*closers, procs.close) // before the backends they use
	f.procs, f.Targets, f.CPU = procs, procs.targets(), procsCPU{procs}
	return nil
}
