//go:build unix && !linux

package fleet

import "syscall"

// childProcAttr puts a child shop in a process group of its own: a Ctrl-C
// in the terminal reaches the load generator alone, which stops its
// children. (No Pdeathsig here: a child whose parent died exits when its
// standard input reaches EOF, child.go.)
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
