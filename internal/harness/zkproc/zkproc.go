// Package zkproc owns real ZooKeeper servers that this program starts on
// loopback: a three-member ensemble of Debian's zookeeper package (3.8,
// which runs under the machine's Java), each member a java process with
// its configuration, data and log in a directory of the caller's. No
// ZooKeeper server can run inside a Go process, so where java or the
// package is missing Binaries says so and how to install them.
//
// The ensemble ticks every 200 ms, so a session's timeout can be from
// 400 ms to 4 s (two to twenty ticks), and a member that stops answering
// is given up by its peers after two seconds (ten ticks). Every member
// answers the four-letter words srvr, ruok, conf, mntr, cons and wchs.
//
// The command in zkensemble starts one from a shell (.ci/run does), and
// the load generator can start one of its own with Start.
package zkproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// InstallHint is the one line that installs what an ensemble needs on
// Debian.
const InstallHint = "apt-get install zookeeper"

// The jar files of Debian's zookeeper package: the server (whose manifest
// names the libraries it needs), and the logger it writes through (from
// libslf4j-java, which it depends on; without it the server logs nothing).
// Variables only so that tests can point them elsewhere.
var (
	serverJar = "/usr/share/java/zookeeper.jar"
	loggerJar = "/usr/share/java/slf4j-simple.jar"
)

// ErrMissingBinaries is wrapped by Binaries' error when java or Debian's
// zookeeper package is not installed.
var ErrMissingBinaries = errors.New("zkproc: a ZooKeeper ensemble needs java and Debian's zookeeper package")

// Binaries returns the path of java and the class path of the ZooKeeper
// server, or an error wrapping ErrMissingBinaries that names what is
// missing and how to install it.
func Binaries() (java, classPath string, err error) {
	var missing []string
	if java, err = exec.LookPath("java"); err != nil {
		missing = append(missing, "java (not on the PATH)")
	}
	if _, err := os.Stat(serverJar); err != nil {
		missing = append(missing, serverJar)
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("%w: %s missing (Debian: %s)", ErrMissingBinaries, strings.Join(missing, " and "), InstallHint)
	}
	classPath = serverJar
	if _, err := os.Stat(loggerJar); err == nil {
		classPath += ":" + loggerJar
	}
	return java, classPath, nil
}

// Members is the number of members an ensemble has: a quorum of two
// survives one member down, and loses the quorum with two down.
const Members = 3

// Tick is the ensemble's tickTime, its unit of time: sessions may last
// from 2 to 20 ticks, and a member's peers give it up after syncTicks
// without an answer.
const Tick = 200 * time.Millisecond

// syncTicks is syncLimit (followers, and the leader for its followers,
// give up a peer that has not answered within it); initTicks is initLimit
// (the time a follower has to catch up with a new leader).
//
// Two seconds, not less: a leader that has just sent a follower a
// snapshot may be slow to answer on a busy machine, and a follower that
// gives it up then forces a second election at once. Debian's 3.8.0
// predates the later 3.8 releases' fixes to recovery: here an ensemble
// that lost its quorum with a write proposed on the surviving leader, then
// elected twice in a row, was seen to stop serving clients for good (it
// answered srvr, and no session request).
const (
	syncTicks = 10
	initTicks = 25
)

// Ports are the three ports of one member: its clients', the one its
// followers connect to when it leads (quorum), and its election port.
type Ports struct {
	Client, Quorum, Election int
}

// config returns member id's zoo.cfg (ids count from 1), its data in
// dataDir, for an ensemble on ports.
func config(id int, dataDir string, ports []Ports) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\n", Tick.Milliseconds(), initTicks, syncTicks)
	fmt.Fprintf(&b, "dataDir=%s\n", dataDir)
	fmt.Fprintf(&b, "clientPort=%d\nclientPortAddress=127.0.0.1\n", ports[id-1].Client)
	b.WriteString(`# No HTTP admin server (it would want port 8080), the four-letter words
# that tell a member's state, no limit on connections from one address
# (every client here comes from 127.0.0.1).
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,conf,mntr,cons,wchs
maxClientCnxns=0
# A peer that does not take an election connection within a second is
# given up (the default is five).
cnxTimeout=1000
# Transaction logs grow 4 MB at a time (64 by default), and old snapshots
# and logs are purged every hour: a dev ensemble may live long.
preAllocSize=4096
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
`)
	for i, p := range ports {
		fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", i+1, p.Quorum, p.Election)
	}
	return b.String()
}

// javaArgs returns the arguments that run the server with configuration
// file cfg: a small heap, the serial collector (these machines have two
// cores), and only warnings logged, but for a member's changes of state
// (looking, following, leading).
func javaArgs(classPath, cfg string) []string {
	return []string{
		"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.quorum.QuorumPeer=info",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-cp", classPath,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg,
	}
}
