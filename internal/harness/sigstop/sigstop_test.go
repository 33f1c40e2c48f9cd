package sigstop_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/sigstop"
)

// TestPause: Pause returns with every thread of a running process
// stopped, Stopped says so, and after Resume it runs again; Pause of a
// process that has exited fails.
func TestPause(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	if sigstop.Stopped(pid, 0) {
		t.Fatal("Stopped says a running process is stopped")
	}
	if err := sigstop.Pause(pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if !sigstop.Stopped(pid, 0) {
		t.Error("after Pause, Stopped says the process runs")
	}
	if err := sigstop.Resume(pid); err != nil {
		t.Fatal(err)
	}
	if sigstop.Stopped(pid, 50*time.Millisecond) {
		t.Error("after Resume, the process is still stopped")
	}

	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := sigstop.Pause(pid, time.Second); err == nil {
		t.Error("Pause of a process that has exited: nil error")
	}
}
