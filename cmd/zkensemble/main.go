// Command zkensemble starts a three-member ZooKeeper ensemble on loopback
// (package zkproc) and exits, leaving it running, or stops one by its
// process ids:
//
//	go run ./cmd/zkensemble start -dir DIR [-first-port N]
//	go run ./cmd/zkensemble stop PID...
//
// start prints, once every member serves, two lines a shell can eval:
//
//	ZK_SERVERS=127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3
//	ZK_PIDS=pid1,pid2,pid3
//
// The members run in process groups of their own; stop them by pid (stop
// does: SIGTERM, then SIGKILL after five seconds). Without -first-port the
// ports are free ones picked at start. Needs java and Debian's zookeeper
// package.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "zkensemble:", err)
		os.Exit(1)
	}
}

// run runs the command that args name; start prints its two lines to
// stdout.
func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: zkensemble start -dir DIR [-first-port N] | zkensemble stop PID...")
	}
	switch args[0] {
	case "start":
		return start(args[1:], stdout)
	case "stop":
		return stop(args[1:])
	}
	return fmt.Errorf("unknown command %q (want start or stop)", args[0])
}

func start(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the members' configuration, data and logs (created if missing)")
	first := fs.Int("first-port", 0, "client ports from here, quorum ports from here+100, election ports from here+200 (0: free ports)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("start: -dir is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	e, err := zkproc.Start(ctx, zkproc.Config{Dir: *dir, FirstPort: *first, Detach: true})
	if err != nil {
		return err
	}
	var pids []string
	for _, p := range e.Pids() {
		pids = append(pids, strconv.Itoa(p))
	}
	fmt.Fprintf(stdout, "ZK_SERVERS=%s\nZK_PIDS=%s\n", strings.Join(e.Servers(), ","), strings.Join(pids, ","))
	return nil
}

func stop(args []string) error {
	for _, a := range args {
		for _, f := range strings.Split(a, ",") {
			pid, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || pid <= 1 {
				return fmt.Errorf("stop: %q is not a process id", f)
			}
			if err := zkproc.StopPid(pid); err != nil {
				return err
			}
		}
	}
	return nil
}
