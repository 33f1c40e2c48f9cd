package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// --products and --skew: one product by default, as every run before
// them; a catalogue is refused where it makes no sense, naming the flag.
func TestCatalogueFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.settings.Products != 1 || c.settings.Skew != scenario.DefaultSkew || c.settings.Catalogue() {
		t.Fatalf("defaults: products %d, skew %v, err %v; want one product, skew %v", c.settings.Products, c.settings.Skew, err, scenario.DefaultSkew)
	}
	c, err = parseFlags([]string{"--products", "20", "--skew", "0.8", "--seed", "7"}, io.Discard)
	if err != nil || c.settings.Products != 20 || c.settings.Skew != 0.8 {
		t.Fatalf("--products 20 --skew 0.8: %+v, %v", c.settings, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--products", "20", "--stock", "10"}, "stock: 10 for 20 products"},
		{[]string{"--products", "20", "--crash", "2"}, "products: a catalogue runs without faults"},
		{[]string{"--products", "-1"}, "products: -1"},
		{[]string{"--skew", "-2"}, "skew: -2"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
