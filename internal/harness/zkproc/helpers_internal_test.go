package zkproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The tests' stand-ins: a java that is this test binary, and servers that
// answer the four-letter words as a ZooKeeper member would. With them an
// ensemble starts, fails and stops in milliseconds, so every path of
// Start and of the members' signals is tested without a JVM;
// ensemble_test.go runs the real one.

// envFakeJava, when set, makes the test binary a fake java (TestMain).
const envFakeJava = "ZKPROC_FAKE_JAVA"

// TestMain runs the tests, or, with ZKPROC_FAKE_JAVA set, is a member's
// java: it appends its pid to Dir/pids (Dir being the ensemble's, from the
// configuration file, its last argument) and says so on its output; then
// with ZKPROC_FAKE_JAVA=exit it exits with status 3 at once, and with
// serve it runs until SIGTERM, which it handles as the JVM does (a stopped
// process runs its handler only once continued).
func TestMain(m *testing.M) {
	mode := os.Getenv(envFakeJava)
	if mode == "" {
		os.Exit(m.Run())
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	cfg := os.Args[len(os.Args)-1]
	f, err := os.OpenFile(filepath.Join(filepath.Dir(cfg), "pids"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	fmt.Println("fake java: no server here, run with", cfg)
	if mode == "exit" {
		os.Exit(3)
	}
	<-term
	os.Exit(0)
}

// fakeJava puts a java of its own alone on the test's PATH, this test
// binary as a member (TestMain) that exits at once (mode "exit") or runs
// until SIGTERM ("serve"); and it points the server jar at a file that
// exists, and the logger jar at one that does not. Binaries then finds
// both. Not for parallel tests: it sets the PATH and the jars.
func fakeJava(t *testing.T, mode string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %q \"$@\"\n", envFakeJava, mode, self)
	if err := os.WriteFile(filepath.Join(bin, "java"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(bin, "zookeeper.jar")
	if err := os.WriteFile(jar, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	setJars(t, jar, filepath.Join(bin, "no-logger.jar"))
}

// setJars points Binaries at other jar files until the test ends.
func setJars(t *testing.T, server, logger string) {
	oldServer, oldLogger := serverJar, loggerJar
	serverJar, loggerJar = server, logger
	t.Cleanup(func() { serverJar, loggerJar = oldServer, oldLogger })
}

// startedPids returns the pids the fake java of the ensemble in dir wrote,
// one per member started, in the order they started.
func startedPids(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pids"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pids file: %v", err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// gone reports whether no process has pid (it exited and was reaped).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// procState returns the state letter of process pid (R, S, T for
// stopped…), or 0 if it cannot be read.
func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(string(b), ')')
	if err != nil || i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// fakeZK answers the four-letter words on a loopback port as a member
// would: srvr with its mode ("" for a member without a quorum, which
// says it serves nothing), conf with its data directory. A silent one
// takes connections and never answers, as a paused member does.
type fakeZK struct {
	ln      net.Listener
	dataDir string
	silent  bool

	mu   sync.Mutex
	mode string
}

// newFakeZK listens on addr ("127.0.0.1:0" for any port) until the test
// ends.
func newFakeZK(t *testing.T, addr, mode, dataDir string) *fakeZK {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return serveFake(t, &fakeZK{ln: ln, mode: mode, dataDir: dataDir})
}

// newSilentZK listens on a loopback port and never answers.
func newSilentZK(t *testing.T) *fakeZK {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveFake(t, &fakeZK{ln: ln, silent: true})
}

// serveFake serves z until the test ends.
func serveFake(t *testing.T, z *fakeZK) *fakeZK {
	t.Cleanup(func() { z.ln.Close() })
	go z.serve()
	return z
}

func (z *fakeZK) addr() string { return z.ln.Addr().String() }

func (z *fakeZK) setMode(mode string) {
	z.mu.Lock()
	z.mode = mode
	z.mu.Unlock()
}

func (z *fakeZK) serve() {
	for {
		c, err := z.ln.Accept()
		if err != nil {
			return
		}
		go z.answer(c)
	}
}

func (z *fakeZK) answer(c net.Conn) {
	if z.silent {
		_, _ = bufio.NewReader(c).ReadString(0) // until the client gives up
		c.Close()
		return
	}
	defer c.Close()
	word := make([]byte, 4)
	if _, err := io.ReadFull(c, word); err != nil {
		return
	}
	z.mu.Lock()
	mode := z.mode
	z.mu.Unlock()
	switch string(word) {
	case "srvr":
		if mode == "" {
			fmt.Fprint(c, "This ZooKeeper instance is not currently serving requests\n")
			return
		}
		fmt.Fprintf(c, "Zookeeper version: fake\nLatency min/avg/max: 0/0.0/0\nMode: %s\nNode count: 5\n", mode)
	case "conf":
		fmt.Fprintf(c, "clientPort=0\ndataDir=%s/version-2\ntickTime=200\n", z.dataDir)
	}
}

// fakeMembers starts three fake members on consecutive client ports, each
// answering for the member of the ensemble in dir with the same index
// (the first leads), and returns the first port: a Config's FirstPort. The
// fake java never binds the quorum and election ports, so only the client
// ports need to be free, and they are held from here on.
func fakeMembers(t *testing.T, dir string) (int, []*fakeZK) {
	t.Helper()
	for range 20 {
		first := newFakeZK(t, "127.0.0.1:0", "leader", filepath.Join(dir, "zk1"))
		port := first.ln.Addr().(*net.TCPAddr).Port
		zks := []*fakeZK{first}
		for i := 1; i < Members; i++ {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+i)))
			if err != nil {
				break // taken: try from another port
			}
			zks = append(zks, serveFake(t, &fakeZK{ln: ln, mode: "follower", dataDir: filepath.Join(dir, "zk"+strconv.Itoa(i+1))}))
		}
		if len(zks) == Members {
			return port, zks
		}
		for _, z := range zks {
			z.ln.Close()
		}
	}
	t.Fatal("no three consecutive free loopback ports in 20 tries")
	return 0, nil
}
