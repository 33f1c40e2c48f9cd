package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// askWithin bounds each question to a server about itself.
const askWithin = 3 * time.Second

// server is what one backend says about itself: what runs, where its data
// goes and how durably, and its fsync counters, read before and after the
// run. A server that does not say leaves a field "unknown (why)".
type server struct {
	name, version, where, durability string
	fsyncs                           func(context.Context) (fsyncCount, error) // nil: not counted
	before, after                    fsyncCount
	beforeErr, afterErr              error
}

// fsyncCount is a server's fsyncs so far, and the time they took where
// the server measures it (known).
type fsyncCount struct {
	n     float64
	took  time.Duration
	known bool
}

// describeServers asks every open backend about itself. It never fails:
// what a server does not say shows as unknown.
func describeServers(ctx context.Context, b *backends, cfg config) []*server {
	var out []*server
	if len(b.redis) > 0 {
		out = append(out, redisServer(ctx, b))
	}
	if b.etcd != nil {
		out = append(out, etcdServer(ctx, b, cfg.etcd))
	}
	if b.zk != nil {
		out = append(out, zkServer(ctx, cfg.zookeeper))
	}
	if b.row != nil {
		out = append(out, dbServer(ctx, b.row))
	}
	return out
}

// countBefore and countAfter read the fsync counters around the run.
func countBefore(ctx context.Context, ss []*server) {
	for _, s := range ss {
		if s.fsyncs != nil {
			s.before, s.beforeErr = s.fsyncs(ctx)
		}
	}
}

func countAfter(ctx context.Context, ss []*server) {
	for _, s := range ss {
		if s.fsyncs != nil {
			s.after, s.afterErr = s.fsyncs(ctx)
		}
	}
}

// writeServers writes the servers' table.
func writeServers(w io.Writer, ss []*server) {
	fmt.Fprintln(w, "## The servers")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What each server does to make a lock durable, as it says itself, and the fsyncs it counted during the whole run (every system's cells; other clients of the same servers count too).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| servers | version | data | durability | fsyncs during the run | mean fsync |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|")
	for _, s := range ss {
		n, mean := "not counted", "—"
		switch {
		case s.fsyncs == nil:
		case s.beforeErr != nil:
			n = unknown(s.beforeErr)
		case s.afterErr != nil:
			n = unknown(s.afterErr)
		default:
			d := s.after.n - s.before.n
			n = fmt.Sprintf("%.0f", d)
			if s.after.known && d > 0 {
				mean = formatMicros((s.after.took - s.before.took) / time.Duration(d))
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", s.name, s.version, s.where, s.durability, n, mean)
	}
	fmt.Fprintln(w)
}

// unknown says that something could not be read, and why, on one line.
func unknown(err error) string {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	msg = strings.ReplaceAll(msg, "|", "/")
	if len(msg) > 80 {
		msg = msg[:80] + "…"
	}
	return "unknown (" + msg + ")"
}

// where is a data directory and the kind of file system it is on, when
// this machine has it.
func where(dir string) string {
	if fs := fsType(dir); fs != "" {
		return fmt.Sprintf("`%s` (%s)", dir, fs)
	}
	return fmt.Sprintf("`%s`", dir)
}

// formatMicros writes a short time in µs below a millisecond: a mean
// fsync on tmpfs is a few, a round trip on loopback a few dozen.
func formatMicros(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
