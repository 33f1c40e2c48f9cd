package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/harness/zkproc"
)

// TestStartPrintsAnEnsembleCIUses checks the contract .ci/run relies on:
// start's stdout is exactly a ZK_SERVERS= line naming three members of one
// ensemble that elects a leader, and a ZK_PIDS= line that stop takes, after
// which no member answers.
func TestStartPrintsAnEnsembleCIUses(t *testing.T) {
	required := os.Getenv("FLASHSALE_TEST_REQUIRE_ZOOKEEPER") == "1"
	if !required {
		testenv.SkipShort(t, "starts three java processes; the full run has them")
	}
	var out bytes.Buffer
	err := run([]string{"start", "-dir", t.TempDir()}, &out)
	if errors.Is(err, zkproc.ErrMissingBinaries) && !required {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	vars := parseLines(t, out.String(), "ZK_SERVERS", "ZK_PIDS")
	stopped := false
	t.Cleanup(func() {
		if !stopped { // never signal a pid again once its process is gone: it may be reused
			_ = run([]string{"stop", vars["ZK_PIDS"]}, &bytes.Buffer{})
		}
	})
	servers := strings.Split(vars["ZK_SERVERS"], ",")
	pids := strings.Split(vars["ZK_PIDS"], ",")
	if len(servers) != 3 || len(pids) != 3 {
		t.Fatalf("%d servers and %d pids, want 3 of each:\n%s", len(servers), len(pids), out.String())
	}
	testenv.WaitFor(t, 30*time.Second, "a member to lead", func() bool {
		_, err := zkproc.Leader(context.Background(), servers)
		return err == nil
	})

	// stop takes the line as CI has it, comma-separated, and returns once
	// the members are gone: no port answers after it.
	stopped = true
	if err := run([]string{"stop", vars["ZK_PIDS"]}, &bytes.Buffer{}); err != nil {
		t.Fatalf("stop %s: %v", vars["ZK_PIDS"], err)
	}
	for _, s := range servers {
		if conn, err := net.DialTimeout("tcp", s, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s answers after stop", s)
		}
	}
}

// TestRunRefuses: usage errors start nothing and print nothing, and stop
// signals no process for an argument that is not a pid (1 is init, a
// negative number a process group).
func TestRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no command", nil, "usage"},
		{"unknown command", []string{"restart"}, `"restart"`},
		{"start without -dir", []string{"start"}, "-dir"},
		{"stop a word", []string{"stop", "java"}, `"java"`},
		{"stop init", []string{"stop", "1"}, `"1"`},
		{"stop a process group", []string{"stop", "-5"}, `"-5"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tc.args, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run %q: %v, want an error with %s", tc.args, err, tc.want)
			}
			if out.Len() > 0 {
				t.Errorf("stdout: %q, want nothing", out.String())
			}
		})
	}
}

// parseLines reads stdout as .ci/run does (sed -n 's/^KEY=//p'), and
// fails t unless it is exactly one line for each of keys, none empty.
func parseLines(t *testing.T, stdout string, keys ...string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for line := range strings.Lines(stdout) {
		k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		if _, dup := vars[k]; !ok || dup {
			t.Fatalf("stdout line %q: want KEY=VALUE, once per key:\n%s", line, stdout)
		}
		vars[k] = v
	}
	for _, k := range keys {
		if vars[k] == "" {
			t.Fatalf("stdout: no %s= line:\n%s", k, stdout)
		}
	}
	if len(vars) != len(keys) {
		t.Fatalf("stdout: %d lines, want %d (%v):\n%s", len(vars), len(keys), keys, stdout)
	}
	return vars
}
