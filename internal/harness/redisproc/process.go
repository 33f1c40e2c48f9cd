// Package redisproc owns real redis-server and redis-sentinel processes
// that this program starts on loopback: one process (Process), a
// replicated Redis under Sentinel (Set): a master, one replica whose
// replication link passes through a fault proxy, and three Sentinels; and
// a Redis Cluster (Cluster, cluster.go): six nodes, three masters with a
// replica each. Tests reach them through internal/harness/testenv; the load
// generator's --failover and --cluster-failover start their own, and
// rediscluster starts a cluster for a shell. No snapshots are taken: a
// process that dies comes back with at most what its append-only file
// kept.
package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/porthold"
	"github.com/flashsale/flashsale/internal/redisopt"
)

// InstallHint is the one line that installs the binaries on Debian.
const InstallHint = "apt-get install redis-server redis-sentinel"

// ErrMissingBinaries is wrapped by Binaries' error when redis-server or
// redis-sentinel is not on the PATH.
var ErrMissingBinaries = errors.New("redisproc: redis-server and redis-sentinel are needed on the PATH")

// Binaries returns the paths of redis-server and redis-sentinel, or an
// error wrapping ErrMissingBinaries that names the missing ones.
func Binaries() (server, sentinel string, err error) {
	var missing []string
	if server, err = exec.LookPath("redis-server"); err != nil {
		missing = append(missing, "redis-server")
	}
	if sentinel, err = exec.LookPath("redis-sentinel"); err != nil {
		missing = append(missing, "redis-sentinel")
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("%w: %s missing (Debian: %s)", ErrMissingBinaries, strings.Join(missing, " and "), InstallHint)
	}
	return server, sentinel, nil
}

// Process is one redis-server or redis-sentinel process, with a client on
// it. Its methods may be called from any goroutine, Kill and Stop more than
// once.
type Process struct {
	Name   string // server1, sentinel1, ...: its log is Name.log
	Addr   string // 127.0.0.1:port
	Client *redis.Client
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited and been reaped
}

// How long a process has to answer after it starts, and to exit after
// SIGTERM before it gets SIGKILL.
const (
	startWithin = 10 * time.Second
	stopWithin  = 5 * time.Second
)

// Start runs binary with the arguments that args returns for a port, its
// output appended to dir/name.log, and returns once it answers there. The
// port is port if above zero, else a free loopback port; another process
// may take a free port between its choice and the server's bind, and then
// it is started again on another one, up to three times. On error nothing
// is left running; the error quotes the end of the log.
func Start(dir, name, binary string, port int, args func(port int) []string) (*Process, error) {
	return start(dir, name, binary, port, args, false)
}

// start is Start, the process in a process group of its own if detach.
func start(dir, name, binary string, port int, args func(port int) []string, detach bool) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	var lastErr error
	for range 3 {
		p := port
		if p <= 0 {
			var err error
			if p, err = freePort(); err != nil {
				return nil, fmt.Errorf("redisproc: %s: %w", name, err)
			}
		}
		proc, err := spawn(name, binary, args(p), p, logPath, detach)
		if err != nil {
			return nil, fmt.Errorf("redisproc: %s: %w", name, err)
		}
		if lastErr = proc.awaitAnswer(); lastErr == nil {
			return proc, nil
		}
		proc.Stop()
		if port > 0 {
			break // the port was asked for: no other to try
		}
	}
	log, _ := os.ReadFile(logPath)
	if len(log) > 2000 {
		log = log[len(log)-2000:]
	}
	return nil, fmt.Errorf("redisproc: %s (%s) did not start: %v; the end of %s:\n%s", name, binary, lastErr, logPath, log)
}

// spawn starts the process and the goroutine that reaps it.
func spawn(name, binary string, args []string, port int, logPath string, detach bool) (*Process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p := &Process{Name: name, Addr: addr, cmd: cmd, Client: redis.NewClient(ClientOptions(addr)), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	return p, nil
}

// awaitAnswer returns nil once the process answers on its port, or an
// error once it has exited, another process answers there, or startWithin
// has passed.
func (p *Process) awaitAnswer() error {
	deadline := time.Now().Add(startWithin)
	ours := fmt.Sprintf("process_id:%d\r\n", p.cmd.Process.Pid)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		info, err := p.Client.Info(ctx, "server").Result()
		cancel()
		switch {
		case err == nil && strings.Contains(info, ours):
			return nil
		case err == nil:
			return fmt.Errorf("another server answers on %s", p.Addr)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("it exited (%v)", p.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s within %v: %v", p.Addr, startWithin, err)
		}
		time.Sleep(20 * time.Millisecond) // the process is starting
	}
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Port is the port the process listens on.
func (p *Process) Port() int {
	_, port, _ := net.SplitHostPort(p.Addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Kill sends SIGKILL to the process (no goodbye to its clients or
// replicas) and returns once it has exited.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Stop sends SIGTERM to the process, SIGKILL if it has not exited within
// five seconds, returns once it has exited, and closes the client.
func (p *Process) Stop() {
	defer p.Client.Close()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopWithin):
		p.Kill()
	}
}

// ClientOptions are the options of every client this package opens: one
// dial attempt, no retries (every fault is seen), no start-up probes.
func ClientOptions(addr string) *redis.Options {
	return redisopt.Client(addr, redisopt.Settings{
		PoolSize: 8, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
}

// freePort returns a loopback port nothing listens on at the moment.
func freePort() (int, error) {
	ports, err := porthold.Free(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
