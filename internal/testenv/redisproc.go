package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisProcess is one redis-server or redis-sentinel process that a test
// started, with a client on it. kill and stop may be called from any
// goroutine, more than once.
type redisProcess struct {
	name   string // master, replica, sentinel1, ...: its log is name.log
	addr   string // 127.0.0.1:port
	cmd    *exec.Cmd
	client *redis.Client
	exited chan struct{} // closed once the process has exited and been reaped
}

// How long a process has to answer after it starts, and to exit after
// SIGTERM before it gets SIGKILL.
const (
	processStartWithin = 10 * time.Second
	processStopWithin  = 5 * time.Second
)

// startRedisProcess runs binary with the arguments that args returns for a
// free loopback port, its output in dir/name.log, and returns once it
// answers there. The process is stopped by its pid when tb ends. Another
// process may take the port between its choice and the server's bind; the
// server then exits, and it is started again on another port, up to three
// times. A process that never answers fails tb, with the end of its log.
func startRedisProcess(tb testing.TB, dir, name, binary string, args func(port int) []string) *redisProcess {
	tb.Helper()
	logPath := filepath.Join(dir, name+".log")
	var lastErr error
	for range 3 {
		port, err := freeLoopbackPort()
		if err != nil {
			tb.Fatalf("testenv: %s: %v", name, err)
		}
		p, err := spawn(name, binary, args(port), port, logPath)
		if err != nil {
			tb.Fatalf("testenv: %s: %v", name, err)
		}
		tb.Cleanup(p.stop)
		if lastErr = p.awaitAnswer(); lastErr == nil {
			return p
		}
		p.stop()
	}
	log, _ := os.ReadFile(logPath)
	if len(log) > 2000 {
		log = log[len(log)-2000:]
	}
	tb.Fatalf("testenv: %s (%s) did not start: %v; the end of %s:\n%s", name, binary, lastErr, logPath, log)
	return nil
}

// spawn starts the process and the goroutine that reaps it.
func spawn(name, binary string, args []string, port int, logPath string) (*redisProcess, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p := &redisProcess{name: name, addr: addr, cmd: cmd, client: redis.NewClient(clientOptions(addr)), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	return p, nil
}

// awaitAnswer returns nil once the process answers on its port, or an
// error once it has exited, another process answers there, or
// processStartWithin has passed.
func (p *redisProcess) awaitAnswer() error {
	deadline := time.Now().Add(processStartWithin)
	ours := fmt.Sprintf("process_id:%d\r\n", p.cmd.Process.Pid)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		info, err := p.client.Info(ctx, "server").Result()
		cancel()
		switch {
		case err == nil && strings.Contains(info, ours):
			return nil
		case err == nil:
			return fmt.Errorf("another server answers on %s", p.addr)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("it exited (%v)", p.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s within %v: %v", p.addr, processStartWithin, err)
		}
		time.Sleep(20 * time.Millisecond) // the process is starting
	}
}

// kill sends SIGKILL to the process and waits until it has exited.
func (p *redisProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop sends SIGTERM to the process, SIGKILL if it has not exited within
// processStopWithin, waits until it has exited, and closes the client.
func (p *redisProcess) stop() {
	defer p.client.Close()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(processStopWithin):
		p.kill()
	}
}

// freeLoopbackPort returns a port nothing listens on at the moment.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
