package redisproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisSentinel is a Sentinel client to addr.
func redisSentinel(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(ClientOptions(addr))
}

// server returns redis-server's path, skipping t where it is missing
// unless FLASHSALE_TEST_REQUIRE_SENTINEL is 1.
func server(t *testing.T) string {
	t.Helper()
	s, _, err := Binaries()
	if err != nil && os.Getenv("FLASHSALE_TEST_REQUIRE_SENTINEL") != "1" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// plain are a redis-server's arguments for port, nothing kept on disk.
func plain(dir string) func(int) []string {
	return func(port int) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	}
}

// Without the binaries on the PATH, Binaries names the missing ones and
// the line that installs them.
func TestBinaries(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := Binaries()
	if !errors.Is(err, ErrMissingBinaries) || !strings.Contains(err.Error(), "redis-server and redis-sentinel missing") || !strings.Contains(err.Error(), InstallHint) {
		t.Errorf("Binaries with an empty PATH: %v, want both named and %q", err, InstallHint)
	}
	if _, err := StartSet(t.Context(), t.TempDir()); !errors.Is(err, ErrMissingBinaries) {
		t.Errorf("StartSet with an empty PATH: %v, want ErrMissingBinaries", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if _, _, err := Binaries(); err == nil || !strings.Contains(err.Error(), ": redis-sentinel missing") {
		t.Errorf("Binaries with redis-server alone: %v, want redis-sentinel named", err)
	}
}

// A process answers on its port once Start returns, logs to its file, and
// is gone once killed; Stop after Kill does nothing more.
func TestProcess(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(dir, "server1", server(t), 0, plain(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx := t.Context()
	if err := p.Client.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("the process does not answer: %v", err)
	}
	if p.Pid() <= 0 || !strings.HasSuffix(p.Addr, ":"+strconv.Itoa(p.Port())) || p.Name != "server1" {
		t.Errorf("process %s at %s, pid %d, port %d", p.Name, p.Addr, p.Pid(), p.Port())
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "server1.log")); len(log) == 0 {
		t.Error("server1.log is empty")
	}
	p.Kill()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Kill returned before the process exited")
	}
	p.Stop() // no second signal, no wait
}

// A port another server answers on is not taken: Start says so, with the
// end of its log, and leaves nothing running. A process that cannot start
// says why.
func TestStartFails(t *testing.T) {
	dir := t.TempDir()
	first, err := Start(dir, "first", server(t), 0, plain(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	if _, err := Start(dir, "second", server(t), first.Port(), plain(dir)); err == nil || !strings.Contains(err.Error(), "second.log") {
		t.Errorf("Start on %s's port: %v, want an error quoting second.log", first.Addr, err)
	}
	bad := func(port int) []string { return []string{"--port", strconv.Itoa(port), "--no-such-option", "1"} }
	if _, err := Start(dir, "bad", server(t), 0, bad); err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Errorf("Start with a bad option: %v, want it not started", err)
	}
	if got := first.Client.Ping(t.Context()).Err(); got != nil {
		t.Errorf("the first server after the failed starts: %v", got)
	}
}

// await asks its condition until it holds, and says what was missing last
// when the context ends first.
func TestAwait(t *testing.T) {
	n := 0
	if err := await(t.Context(), "three asks", func(context.Context) (bool, string) { n++; return n == 3, "" }); err != nil || n != 3 {
		t.Errorf("await = %v after %d asks, want nil after 3", err, n)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	err := await(ctx, "the impossible", func(context.Context) (bool, string) { return false, "still not" })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the impossible") || !strings.Contains(err.Error(), "last: still not") {
		t.Errorf("await past its deadline: %v", err)
	}
	if h, p := splitAddr("127.0.0.1:6379"); h != "127.0.0.1" || p != "6379" {
		t.Errorf("splitAddr = %q, %q", h, p)
	}
	if o := ClientOptions("a:1"); o.MaxRetries != -1 || o.DialerRetries != 1 || o.Addr != "a:1" {
		t.Errorf("ClientOptions = %+v: every fault must be seen, never retried", o)
	}
}

// A process started on a port asked for listens there, INFO reads as a
// map, and Stop shuts it down gracefully and closes its client.
func TestProcessOnAPort(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := Start(dir, "fixed", server(t), port, plain(dir))
	if err != nil {
		t.Fatal(err)
	}
	if p.Port() != port {
		t.Errorf("port %d, want %d", p.Port(), port)
	}
	m, err := info(t.Context(), p.Client)
	if err != nil || m["role"] != "master" || m["connected_slaves"] != "0" {
		t.Errorf("info = %v, %v; want a master without replicas", m, err)
	}
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Error("Stop returned before the process exited")
	}
	if err := p.Client.Ping(t.Context()).Err(); err == nil {
		t.Error("the client answers after Stop")
	}
	if _, err := info(t.Context(), p.Client); err == nil {
		t.Error("info of a stopped process: no error")
	}
	if got := NamedBy(t.Context(), redisSentinel("127.0.0.1:"+strconv.Itoa(port))); !strings.HasPrefix(got, "(") {
		t.Errorf("NamedBy a Sentinel that is not there = %q, want the error in parentheses", got)
	}
}

// A set that could not start leaves no process behind: here its context
// ended before the replica was in sync.
func TestStartSetLeavesNothingOnError(t *testing.T) {
	server(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s, err := StartSet(ctx, dir); err == nil || s != nil {
		t.Fatalf("StartSet on an ended context = %v, %v; want an error", s, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), dir) {
			t.Errorf("%s still runs: %q", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// A free port another process takes before the server binds it is given
// up for another: here the first port the arguments name is taken.
func TestStartTriesAnotherPort(t *testing.T) {
	dir := t.TempDir()
	taken, err := Start(dir, "taken", server(t), 0, plain(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Stop()
	tries := 0
	p, err := Start(dir, "retried", server(t), 0, func(port int) []string {
		if tries++; tries == 1 {
			port = taken.Port() // as if someone took the free port first
		}
		return plain(dir)(port)
	})
	if err != nil {
		t.Fatalf("Start after a taken port: %v", err)
	}
	defer p.Stop()
	if tries != 2 || p.Port() == taken.Port() {
		t.Errorf("%d tries, port %d (the taken one is %d); want a second try on another port", tries, p.Port(), taken.Port())
	}
}

// A set's server keeps what it acknowledged across a SIGKILL: its
// append-only file, fsynced once a second, is read back when the process
// starts again on its port (a queue of accepted orders needs no more).
func TestSetServerKeepsItsWritesAcrossAKill(t *testing.T) {
	dir := t.TempDir()
	s := &Set{dir: dir, server: server(t), disk: []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--dir", dir}}
	p, err := Start(dir, "server1", s.server, 0, s.serverArgs(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Client.Set(t.Context(), "accepted", "order-1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	aof := filepath.Join(dir, "aof-"+strconv.Itoa(p.Port()))
	for written := false; !written; {
		files, _ := filepath.Glob(filepath.Join(aof, "*.incr.aof"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			written = written || strings.Contains(string(b), "order-1")
		}
		time.Sleep(10 * time.Millisecond) // the server's own fsync, once a second
	}
	p.Kill()
	back, err := Start(dir, "server1", s.server, p.Port(), s.serverArgs(""))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Stop()
	// A server still reading its append-only file answers LOADING.
	v, err := back.Client.Get(t.Context(), "accepted").Result()
	for deadline := time.Now().Add(10 * time.Second); err != nil && strings.HasPrefix(err.Error(), "LOADING") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		v, err = back.Client.Get(t.Context(), "accepted").Result()
	}
	if v != "order-1" {
		t.Errorf("after the kill: accepted = %q, %v; want order-1, read back from the append-only file", v, err)
	}
	if args := strings.Join(s.serverArgs("127.0.0.1:7000")(7001), " "); !strings.HasSuffix(args, "--appenddirname aof-7001 --replicaof 127.0.0.1 7000") {
		t.Errorf("a replica's arguments %q: want its own append-only folder and its master", args)
	}
}

// A binary that is not there is an error naming the process.
func TestStartWithoutTheBinary(t *testing.T) {
	_, err := Start(t.TempDir(), "ghost", filepath.Join(t.TempDir(), "redis-server"), 0, plain(t.TempDir()))
	if err == nil || !strings.HasPrefix(err.Error(), "redisproc: ghost:") {
		t.Errorf("Start of a missing binary: %v, want an error naming ghost", err)
	}
}

// A process that ignores SIGTERM is killed once stopWithin has passed:
// Stop always returns with the process gone.
func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out stopWithin")
	}
	ready := filepath.Join(t.TempDir(), "ready")
	p, err := spawn("stubborn", "/bin/sh", []string{"-c", `trap "" TERM; touch "$0"; while :; do sleep 1; done`, ready}, 1, filepath.Join(t.TempDir(), "stubborn.log"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
		time.Sleep(5 * time.Millisecond) // until the shell has set its trap
	}
	start := time.Now()
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned with the process running")
	}
	if took := time.Since(start); took < stopWithin {
		t.Errorf("Stop took %v: the process ignores SIGTERM, so it should have been killed after %v", took, stopWithin)
	}
}
