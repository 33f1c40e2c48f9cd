package main

import (
	"fmt"
	"io"
	"strings"
	"syscall"
)

// filesStopped is report.md's and report.json's line for a run stopped
// by err, which wraps scenario.ErrTooManyOpenFiles: the cause and the
// limit.
func filesStopped(err error) string {
	return fmt.Sprintf("this process ran out of file descriptors (%v); %s", err, filesLimit())
}

// filesLimit says what the limit is and how to raise it.
func filesLimit() string {
	cur, hard, ok := openFilesLimit()
	if !ok {
		return "every connection holds one: raise the limit on open files, or offer lower rates"
	}
	return fmt.Sprintf("the limit is %d open files (ulimit -n; hard limit %d), and every connection holds one, "+
		"the embedded shops' too: raise it before loadgen with 'ulimit -n %d' (up to the hard limit, 'ulimit -Hn'; "+
		"past it, LimitNOFILE= in systemd or 'docker run --ulimit nofile=%d:%d'), or offer lower rates",
		cur, hard, max(hard, 65536), 65536, 65536)
}

// printFilesStopped is what loadgen prints on stderr when it ran out of
// file descriptors.
func printFilesStopped(w io.Writer, err error) {
	fmt.Fprintf(w, "loadgen: stopped: %s\nloadgen: the rows and points measured before are in the report (exit %d)\n",
		strings.TrimSuffix(filesStopped(err), "."), exitFiles)
}

// openFilesLimit is this process's limit on open files (RLIMIT_NOFILE),
// soft and hard. Go raises the soft limit to the hard one at start-up.
func openFilesLimit() (cur, hard uint64, ok bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, false
	}
	return l.Cur, l.Max, true
}
