// Package sigstop pauses a process as if it hung (SIGSTOP) and returns
// only once it has stopped. kill(2) returns before the threads of a
// process running on another core have stopped, and a multi-threaded
// server (a JVM, etcd) may answer a request sent in between: a test that
// pauses a member and then expects silence needs to wait for it.
package sigstop

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Pause sends SIGSTOP to pid and waits until every thread of it is
// stopped, as Linux's /proc/pid/task/*/stat says, for at most within. It
// returns an error if the signal cannot be sent or the process has not
// stopped by then. Where there is no /proc it cannot tell, and returns
// once the signal is sent. Any goroutine may call it.
func Pause(pid int, within time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("sigstop: SIGSTOP to pid %d: %w", pid, err)
	}
	if !Stopped(pid, within) {
		return fmt.Errorf("sigstop: pid %d did not stop within %v of SIGSTOP", pid, within)
	}
	return nil
}

// Resume sends SIGCONT to pid.
func Resume(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		return fmt.Errorf("sigstop: SIGCONT to pid %d: %w", pid, err)
	}
	return nil
}

// Stopped waits until every thread of pid is stopped, for at most d, and
// reports whether they all are. A process that has exited is not
// stopped. Where there is no /proc it reports true at once.
func Stopped(pid int, d time.Duration) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	for deadline := time.Now().Add(d); ; {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist) && !procMounted()
		}
		if allStopped(dir, tasks) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// allStopped reports whether every thread in tasks (the entries of dir,
// /proc/pid/task) is stopped: 'T', or 't' if traced. A thread that has
// ended meanwhile is passed over.
func allStopped(dir string, tasks []os.DirEntry) bool {
	for _, t := range tasks {
		stat, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue
		}
		// The state follows the command's closing parenthesis.
		j := bytes.LastIndexByte(stat, ')')
		if j < 0 || j+2 >= len(stat) || (stat[j+2] != 'T' && stat[j+2] != 't') {
			return false
		}
	}
	return true
}

// procMounted reports whether /proc is Linux's process file system.
func procMounted() bool {
	_, err := os.Stat("/proc/self/task")
	return err == nil
}
