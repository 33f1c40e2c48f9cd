// Command rediscluster starts a Redis Cluster on loopback (package
// redisproc: six redis-server processes in cluster mode, joined by
// redis-cli into three masters with a replica each) and exits, leaving it
// running:
//
//	go run ./cmd/rediscluster -dir DIR [-first-port N] [-node-timeout D]
//
// It prints, once the cluster says cluster_state:ok on every node and
// every replica is in sync, two lines a shell can eval:
//
//	REDIS_CLUSTER=127.0.0.1:p1,...,127.0.0.1:p6
//	REDIS_CLUSTER_PIDS=pid1,...,pid6
//
// The nodes run in process groups of their own; stop them by pid (kill).
// Without -first-port the ports are free ones picked at start. Needs
// redis-server and redis-cli (Debian's redis-server and redis-tools).
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
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/harness/redisproc"
)

// quiet drops go-redis's own log lines: the refused dials while a node
// starts are expected, and would bury the two lines a shell evals.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rediscluster:", err)
		os.Exit(1)
	}
}

// run starts the cluster that args describe and prints its two lines to
// stdout.
func run(args []string, stdout io.Writer) error {
	redis.SetLogger(quiet{})
	fs := flag.NewFlagSet("rediscluster", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the nodes' configuration, append-only files and logs (created if missing)")
	first := fs.Int("first-port", 0, "client ports from here (six), cluster bus ports 10000 above (0: free ports)")
	timeout := fs.Duration("node-timeout", redisproc.DefaultNodeTimeout, "cluster-node-timeout: how long a node may not answer before its replica is elected")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx, cancelStart := context.WithTimeout(ctx, time.Minute)
	defer cancelStart()
	c, err := redisproc.StartCluster(ctx, redisproc.ClusterConfig{Dir: *dir, FirstPort: *first, NodeTimeout: *timeout, Detach: true})
	if err != nil {
		return err
	}
	var pids []string
	for _, p := range c.Pids() {
		pids = append(pids, strconv.Itoa(p))
	}
	fmt.Fprintf(stdout, "REDIS_CLUSTER=%s\nREDIS_CLUSTER_PIDS=%s\n", strings.Join(c.Addrs(), ","), strings.Join(pids, ","))
	return nil
}
