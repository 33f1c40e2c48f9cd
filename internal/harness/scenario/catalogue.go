package scenario

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// A catalogue: each row sells Products products at once instead of one,
// to the same crowd. Every buyer wants one product, drawn from a Zipf
// law: product k (1 is the hottest) is wanted in proportion to 1/k^Skew,
// so one or two products draw most of the crowd and a long tail draws a
// few buyers each. The stock is split evenly, so the hot products sell
// out and the cold ones may not. Each product is created, attacked and
// audited as itself (catalogue_audit.go); the row's figures are the sums.

// DefaultSkew is --skew's default: with 20 products the hottest draws
// about a third of the buyers, the second about a seventh, and the
// coldest about 1% (ZipfShares).
const DefaultSkew = 1.1

// MaxProducts bounds Settings.Products: each product of each row is
// created, audited and reported on its own.
const MaxProducts = 1000

// products is how many products each row sells: 1 unless Products says
// more.
func (s Settings) products() int { return max(s.Products, 1) }

// Catalogue reports whether each row sells more than one product.
func (s Settings) Catalogue() bool { return s.products() > 1 }

// stockOf is product i's units (0 the hottest): Stock split evenly over
// the products, the remainder one unit each to the hottest ones. With one
// product it is Stock.
func (s Settings) stockOf(i int) int {
	n := s.products()
	st := s.Stock / n
	if i < s.Stock%n {
		st++
	}
	return st
}

// productIDs names a row's products: base itself for one product, as
// every run before catalogues; base-p01, base-p02... for a catalogue, p01
// the hottest.
func (s Settings) productIDs(base string) []string {
	n := s.products()
	if n == 1 {
		return []string{base}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-p%02d", base, i+1)
	}
	return ids
}

// ZipfShares are the probabilities that one buyer wants each of n
// products under exponent skew, hottest first; they sum to 1. Skew 0
// spreads the buyers evenly.
func ZipfShares(n int, skew float64) []float64 {
	w := make([]float64, n)
	sum := 0.0
	for k := range w {
		w[k] = 1 / math.Pow(float64(k+1), skew)
		sum += w[k]
	}
	for k := range w {
		w[k] /= sum
	}
	return w
}

// drawProducts gives each of buyers buyers a product, 0..Products-1,
// drawn from ZipfShares with an rng of its own seeded by s.Seed: the
// crowd's other draws (who clicks how often, in which order, on which
// shop) are those of the one-product run, and the same --seed draws the
// same products. With one product every buyer wants product 0.
func (s Settings) drawProducts(buyers int) []int {
	out := make([]int, buyers)
	if !s.Catalogue() {
		return out
	}
	shares := ZipfShares(s.products(), s.Skew)
	cum := make([]float64, len(shares))
	acc := 0.0
	for k, p := range shares {
		acc += p
		cum[k] = acc
	}
	rng := rand.New(rand.NewPCG(s.Seed^0x5a17c0de, s.Seed+0x2011))
	for b := range out {
		// The first product whose cumulative share passes the draw;
		// min guards the last against rounding.
		out[b] = min(sort.SearchFloat64s(cum, rng.Float64()), len(cum)-1)
	}
	return out
}

// catalogueProblems is what Problems says of Products and Skew.
func (s Settings) catalogueProblems() []string {
	var bad []string
	if s.Products < 0 || s.Products > MaxProducts {
		bad = append(bad, fmt.Sprintf("products: %d, want 1..%d products", s.Products, MaxProducts))
	}
	if !(s.Skew >= 0 && s.Skew <= 10) {
		bad = append(bad, fmt.Sprintf("skew: %v, want a Zipf exponent in 0..10 (0: every product alike)", s.Skew))
	}
	if s.Catalogue() && s.Stock < s.products() {
		bad = append(bad, fmt.Sprintf("stock: %d for %d products, want at least one unit each (--stock is the catalogue's total)", s.Stock, s.products()))
	}
	if s.Catalogue() && len(s.Faults) > 0 {
		bad = append(bad, "products: a catalogue runs without faults (each fault strikes one product's keys and settles one product's audit)")
	}
	return bad
}
