package main

import (
	"io"
	"maps"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// --part 1/1 is the whole crowd: the same settings and the same recorded
// flags as no --part, so its report is one generator's, not a part's.
func TestPartOneOfOneIsTheWholeCrowd(t *testing.T) {
	whole, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	one, err := parseFlags([]string{"--part", "1/1"}, io.Discard)
	if err != nil {
		t.Fatalf("--part 1/1: %v", err)
	}
	if one.settings.Part != (scenario.Part{}) {
		t.Errorf("--part 1/1: settings.Part {I: %d, N: %d}, want the zero Part of no --part", one.settings.Part.I, one.settings.Part.N)
	}
	if !maps.Equal(one.flags, whole.flags) {
		t.Errorf("--part 1/1 records part=%q, no --part %q: want the same flags", one.flags["part"], whole.flags["part"])
	}
}
