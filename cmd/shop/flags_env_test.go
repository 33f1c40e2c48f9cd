package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/flagenv"
)

// Every variable spelt out in flagSpecs is the one flagenv reads.
func TestFlagSpecsNameTheirVariables(t *testing.T) {
	for _, spec := range flagSpecs {
		if got := flagenv.EnvName(envPrefix, spec.name); got != spec.env {
			t.Errorf("--%s: flagSpecs says %s, flagenv reads %s", spec.name, spec.env, got)
		}
	}
}

// The help mentions the embedded etcd cluster that strategy etcd runs on
// with no flags.
func TestHelpMentionsEmbeddedEtcd(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseFlags([]string{"--help"}, noEnv, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(--help) = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(out.String(), "embedded three-member etcd") {
		t.Errorf("help does not mention the embedded etcd cluster:\n%s", out.String())
	}
}
