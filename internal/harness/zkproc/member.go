package zkproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// member is one java process of an ensemble.
type member struct {
	id     int // 1, 2, 3: its myid
	dir    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited and been reaped
}

func (m *member) name() string    { return "zk" + strconv.Itoa(m.id) }
func (m *member) dataDir() string { return filepath.Join(m.dir, m.name()) }
func (m *member) cfgPath() string { return filepath.Join(m.dir, m.name()+".cfg") }
func (m *member) logPath() string { return filepath.Join(m.dir, m.name()+".log") }
func (m *member) running() bool   { return m.cmd != nil && !m.done() }
func (m *member) done() bool {
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// spawn starts the process, its output appended to its log, and the
// goroutine that reaps it.
func (m *member) spawn(java, classPath string, detach bool) error {
	log, err := os.OpenFile(m.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(java, javaArgs(classPath, m.cfgPath())...)
	cmd.Stdout, cmd.Stderr = log, log
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(m.exited)
	}()
	return nil
}

// awaitServing returns nil once the member answers on addr that it serves
// as leader or follower, from its own data directory (not another server
// that has the port); an error once it has exited or ctx has ended.
func (m *member) awaitServing(ctx context.Context, addr string) error {
	for {
		mode, err := FourLetter(ctx, addr, "srvr")
		if err == nil && servingMode(mode) != "" {
			conf, err := FourLetter(ctx, addr, "conf")
			if err == nil && !strings.Contains(conf, m.dataDir()) {
				return fmt.Errorf("another ZooKeeper server answers on %s", addr)
			}
			if err == nil {
				return nil
			}
		}
		if m.done() {
			return fmt.Errorf("it exited (%v)", m.cmd.ProcessState)
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("it answers %q", firstLine(mode))
			}
			return fmt.Errorf("%w (last answer: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond): // it is starting, or electing
		}
	}
}

// kill sends SIGKILL and waits until the process has exited; a paused
// process dies all the same.
func (m *member) kill() {
	if !m.running() {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.exited
}

// stop sends SIGTERM (after SIGCONT, in case it was paused), then SIGKILL
// if it has not exited within stopWithin, and waits until it has exited.
func (m *member) stop() {
	if !m.running() {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGCONT)
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(stopWithin):
		m.kill()
	}
}

// FourLetter sends ZooKeeper's four-letter word cmd (srvr, ruok, conf…) to
// the server at addr and returns its answer; the server must allow the
// word (4lw.commands.whitelist). It gives up after a second, or when ctx
// ends.
func FourLetter(ctx context.Context, addr, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// servingMode returns "leader", "follower" or "standalone" from the answer
// to srvr of a server that serves clients, and "" otherwise ("This
// ZooKeeper instance is not currently serving requests").
func servingMode(srvr string) string {
	for _, line := range strings.Split(srvr, "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode)
		}
	}
	return ""
}

// Mode returns the role of the server at addr, "leader", "follower" or
// "standalone", or "" if it answers but does not serve clients (no
// quorum); an error if it does not answer srvr within a second.
func Mode(ctx context.Context, addr string) (string, error) {
	srvr, err := FourLetter(ctx, addr, "srvr")
	if err != nil {
		return "", err
	}
	return servingMode(srvr), nil
}

// ErrNoLeader is wrapped by Leader's error when no member says it leads.
var ErrNoLeader = errors.New("zkproc: no member leads")

// Leader returns the index in servers of the member that says it leads
// (srvr), or an error wrapping ErrNoLeader if none does: an election is
// on, the leader is down or paused, or there is no quorum. It asks the
// members one after the other, each for at most a second; a member that
// does not answer is passed over. Callers that wait for a leader poll it.
func Leader(ctx context.Context, servers []string) (int, error) {
	for i, s := range servers {
		if mode, err := Mode(ctx, s); err == nil && mode == "leader" {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w of %s", ErrNoLeader, strings.Join(servers, ","))
}

// StopPid stops the process pid as Stop stops a member (SIGCONT, SIGTERM,
// then SIGKILL after five seconds), for a process this one did not start:
// it polls until the pid is gone. It returns nil if there was no such
// process.
func StopPid(pid int) error {
	_ = syscall.Kill(pid, syscall.SIGCONT)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if err == syscall.ESRCH {
			return nil
		}
		return fmt.Errorf("zkproc: stop pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(stopWithin)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(stopWithin)
		}
		time.Sleep(20 * time.Millisecond) // a process we cannot wait for
	}
	return nil
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// tail returns the last n bytes of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
