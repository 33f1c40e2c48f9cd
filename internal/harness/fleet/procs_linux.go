//go:build linux

package fleet

import "syscall"

// childProcAttr puts a child shop in a process group of its own (a Ctrl-C
// in the terminal reaches the load generator alone, which stops its
// children) and has the kernel SIGKILL it if the load generator dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
