package zkproc

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConfig: each member's zoo.cfg names its own client port and data,
// every member's quorum and election ports, the tick and limits the
// package comment promises (sessions of 2 to 20 ticks from 400 ms, a
// silent peer given up after 2 s), and the four-letter words Start and
// Mode ask.
func TestConfig(t *testing.T) {
	ports := []Ports{{31001, 31101, 31201}, {31002, 31102, 31202}, {31003, 31103, 31203}}
	for id := 1; id <= Members; id++ {
		cfg := parseConfig(t, config(id, "/data/zk"+strconv.Itoa(id), ports))
		want := map[string]string{
			"clientPort":              strconv.Itoa(ports[id-1].Client),
			"clientPortAddress":       "127.0.0.1",
			"dataDir":                 "/data/zk" + strconv.Itoa(id),
			"server.1":                "127.0.0.1:31101:31201",
			"server.2":                "127.0.0.1:31102:31202",
			"server.3":                "127.0.0.1:31103:31203",
			"tickTime":                "200",
			"admin.enableServer":      "false",
			"4lw.commands.whitelist":  "srvr,ruok,conf,mntr,cons,wchs",
			"maxClientCnxns":          "0",
			"autopurge.purgeInterval": "1",
		}
		for k, v := range want {
			if cfg[k] != v {
				t.Errorf("member %d: %s=%q, want %q", id, k, cfg[k], v)
			}
		}
		tick, _ := strconv.Atoi(cfg["tickTime"])
		sync, _ := strconv.Atoi(cfg["syncLimit"])
		if got := time.Duration(tick*sync) * time.Millisecond; got != 2*time.Second {
			t.Errorf("member %d: a silent peer is given up after %v (syncLimit × tickTime), want 2s", id, got)
		}
		if init, _ := strconv.Atoi(cfg["initLimit"]); init < sync {
			t.Errorf("member %d: initLimit %d under syncLimit %d: a follower could not catch up", id, init, sync)
		}
	}
	if min, max := 2*Tick, 20*Tick; min != 400*time.Millisecond || max != 4*time.Second {
		t.Errorf("sessions may last %v to %v, want 400ms to 4s", min, max)
	}
}

// parseConfig reads zoo.cfg's key=value lines, failing t on a key set
// twice.
func parseConfig(t *testing.T, cfg string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(cfg, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if _, dup := out[k]; dup {
			t.Errorf("%s set twice", k)
		}
		out[k] = v
	}
	return out
}

// TestJavaArgs: the server's main class runs the configuration file given,
// on the class path given.
func TestJavaArgs(t *testing.T) {
	args := javaArgs("/a.jar:/b.jar", "/d/zk2.cfg")
	if n := len(args); n < 2 || args[n-2] != "org.apache.zookeeper.server.quorum.QuorumPeerMain" || args[n-1] != "/d/zk2.cfg" {
		t.Errorf("args end %q, want the main class, then the configuration", args[max(len(args)-2, 0):])
	}
	if i := slices.Index(args, "-cp"); i < 0 || i+1 >= len(args) || args[i+1] != "/a.jar:/b.jar" {
		t.Errorf("args %q: want -cp /a.jar:/b.jar", args)
	}
}

// TestPickPorts: from FirstPort, client, quorum and election ports 100
// apart, one up per member; otherwise nine distinct free ports, released
// for the members to take.
func TestPickPorts(t *testing.T) {
	got, err := pickPorts(40000)
	if err != nil {
		t.Fatal(err)
	}
	want := []Ports{{40000, 40100, 40200}, {40001, 40101, 40201}, {40002, 40102, 40202}}
	if !slices.Equal(got, want) {
		t.Errorf("pickPorts(40000) = %v, want %v", got, want)
	}

	got, err = pickPorts(0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range got {
		for _, port := range []int{p.Client, p.Quorum, p.Election} {
			if port <= 0 || seen[port] {
				t.Errorf("port %d zero or picked twice in %v", port, got)
			}
			seen[port] = true
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				t.Errorf("port %d was not released: %v", port, err)
				continue
			}
			ln.Close()
		}
	}
	if len(seen) != 3*Members {
		t.Errorf("%d ports picked, want %d", len(seen), 3*Members)
	}
}

// TestServingMode: the role comes from srvr's Mode line; a member without
// a quorum has none.
func TestServingMode(t *testing.T) {
	for _, tc := range []struct{ srvr, want string }{
		{"Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.1/3\nMode: leader\nNode count: 9\n", "leader"},
		{"Mode: follower\r\n", "follower"},
		{"Mode: standalone", "standalone"},
		{"This ZooKeeper instance is not currently serving requests\n", ""},
		{"", ""},
		{"Zookeeper version: 3.8.0\nmode: leader\n", ""},
	} {
		if got := servingMode(tc.srvr); got != tc.want {
			t.Errorf("servingMode(%q) = %q, want %q", tc.srvr, got, tc.want)
		}
	}
}

// TestBinaries: java is found on the PATH and the server jar where Debian
// puts it, the logger jar joins the class path if it is there; whatever
// is missing is named, with the package that installs it.
func TestBinaries(t *testing.T) {
	withJava := t.TempDir()
	java := filepath.Join(withJava, "java")
	if err := os.WriteFile(java, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	jars := t.TempDir()
	server, logger := filepath.Join(jars, "zookeeper.jar"), filepath.Join(jars, "slf4j-simple.jar")
	for _, f := range []string{server, logger} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nowhere := filepath.Join(jars, "absent.jar")
	for _, tc := range []struct {
		name           string
		path           string // the PATH
		server, logger string
		wantCP         string   // the class path; "" for an error
		wantSaid       []string // in the error
	}{
		{"all there", withJava, server, logger, server + ":" + logger, nil},
		{"no logger", withJava, server, nowhere, server, nil},
		{"no java", t.TempDir(), server, logger, "", []string{"java (not on the PATH) missing", InstallHint}},
		{"no server jar", withJava, nowhere, logger, "", []string{nowhere + " missing", InstallHint}},
		{"neither", t.TempDir(), nowhere, logger, "", []string{"java (not on the PATH) and " + nowhere + " missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			setJars(t, tc.server, tc.logger)
			gotJava, cp, err := Binaries()
			if tc.wantCP != "" {
				if err != nil || gotJava != java || cp != tc.wantCP {
					t.Errorf("Binaries() = %q, %q, %v; want %q, %q", gotJava, cp, err, java, tc.wantCP)
				}
				return
			}
			if !errors.Is(err, ErrMissingBinaries) {
				t.Fatalf("Binaries() error %v, want ErrMissingBinaries", err)
			}
			for _, s := range tc.wantSaid {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}
