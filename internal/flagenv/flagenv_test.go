package flagenv

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
)

func newSet() (*flag.FlagSet, *int, *string) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("max-in-flight", 8, "orders at once")
	s := fs.String("out", "", "folder (default none: the screen)")
	return fs, n, s
}

func TestEnvName(t *testing.T) {
	if got, want := EnvName("LOADGEN", "max-in-flight"), "LOADGEN_MAX_IN_FLIGHT"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCommandLineBeatsEnv(t *testing.T) {
	fs, n, s := newSet()
	env := map[string]string{"X_MAX_IN_FLIGHT": "3", "X_OUT": "from-env"}
	getenv := func(k string) string { return env[k] }
	if err := SetFromEnv(fs, "X", getenv); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--out", "from-line"}); err != nil {
		t.Fatal(err)
	}
	if *n != 3 || *s != "from-line" {
		t.Errorf("max-in-flight %d, out %q; want 3 (env) and from-line (command line)", *n, *s)
	}
}

func TestBadEnvNamesVariableAndFlag(t *testing.T) {
	fs, _, _ := newSet()
	err := SetFromEnv(fs, "X", func(k string) string {
		if k == "X_MAX_IN_FLIGHT" {
			return "many"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "X_MAX_IN_FLIGHT") || !strings.Contains(err.Error(), "--max-in-flight") {
		t.Errorf("err = %v, want one naming X_MAX_IN_FLIGHT and --max-in-flight", err)
	}
}

func TestPrintFlags(t *testing.T) {
	fs, _, _ := newSet()
	var b bytes.Buffer
	PrintFlags(&b, fs, "X", []string{"out", "max-in-flight"})
	want := "  --out\n        folder\n        env X_OUT, default none: the screen\n" +
		"  --max-in-flight\n        orders at once\n        env X_MAX_IN_FLIGHT, default \"8\"\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
