//go:build !unix

package fleet

import "syscall"

// childProcAttr changes nothing here: a child whose parent died exits when
// its standard input reaches EOF (child.go).
func childProcAttr() *syscall.SysProcAttr { return nil }
