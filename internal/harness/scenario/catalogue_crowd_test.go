package scenario

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/tally"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// One product is the run as it was before catalogues: the same clicks, the
// same product id, untagged URLs, the whole stock.
func TestOneProductIsTheOldRun(t *testing.T) {
	s := DefaultSettings()
	one, zero := s, s
	zero.Products = 0
	a, b := newCrowd(one), newCrowd(zero)
	if !slices.Equal(a.clicks, b.clicks) {
		t.Fatal("Products 1 and 0 make different crowds")
	}
	for _, k := range a.clicks {
		if k.product != 0 {
			t.Fatalf("click %+v wants product %d, want 0", k, k.product)
		}
	}
	if ids := s.productIDs("d11-x-lua"); !slices.Equal(ids, []string{"d11-x-lua"}) {
		t.Errorf("productIDs = %q, want the row's id alone", ids)
	}
	if got := s.stockOf(0); got != s.Stock {
		t.Errorf("stockOf(0) = %d, want %d", got, s.Stock)
	}
	for _, tg := range a.targets([]string{"http://x"}, []string{"p"}, clickTokens{}) {
		if strings.Contains(tg.URL, "#") {
			t.Fatalf("one product's URL %q is tagged", tg.URL)
		}
	}
}

// A catalogue's crowd is the one-product crowd with a product drawn for
// each buyer: the same clicks in the same order on the same shops, every
// click of one buyer on one product, reproducible from the seed, and
// spread as ZipfShares says.
func TestCatalogueCrowd(t *testing.T) {
	s := DefaultSettings()
	s.Users = 20000
	one := newCrowd(s)
	s.Products = 20
	c := newCrowd(s)
	if again := newCrowd(s); !slices.Equal(c.clicks, again.clicks) {
		t.Fatal("two catalogue crowds from one seed differ")
	}
	if len(c.clicks) != len(one.clicks) {
		t.Fatalf("%d clicks, the one-product crowd %d", len(c.clicks), len(one.clicks))
	}
	for i, k := range c.clicks {
		if k.product != c.wants[k.user] {
			t.Fatalf("click %+v is not on its buyer's product %d", k, c.wants[k.user])
		}
		k.product = 0
		if k != one.clicks[i] {
			t.Fatalf("click %d = %+v, the one-product crowd's %+v", i, k, one.clicks[i])
		}
	}
	shares := ZipfShares(20, s.Skew)
	buyers := 0
	for p, want := range shares {
		n, _ := c.share(p)
		buyers += n
		got := float64(n) / float64(s.Users)
		// Four standard deviations of a binomial share.
		if tol := 4 * math.Sqrt(want*(1-want)/float64(s.Users)); math.Abs(got-want) > tol {
			t.Errorf("product %d: share %.4f, want %.4f ± %.4f", p, got, want, tol)
		}
	}
	if buyers != s.Users {
		t.Errorf("shares hold %d buyers, want %d", buyers, s.Users)
	}
	ids := s.productIDs("row")
	for _, tg := range c.targets([]string{"http://x"}, ids, clickTokens{})[:50] {
		r := ledgerResult(tg.URL)
		if p := tally.ProductOf(&r); !strings.Contains(string(tg.Body), `"product_id":"`+p+`"`) {
			t.Errorf("target %s tagged %q, body %s", tg.URL, p, tg.Body)
		}
	}
}

// The stock is split evenly over the products, the remainder to the
// hottest, and no unit is lost.
func TestStockOf(t *testing.T) {
	s := Settings{Stock: 103, Products: 20}
	total := 0
	for i := range 20 {
		want := 5
		if i < 3 {
			want = 6
		}
		if got := s.stockOf(i); got != want {
			t.Errorf("stockOf(%d) = %d, want %d", i, got, want)
		}
		total += s.stockOf(i)
	}
	if total != s.Stock {
		t.Errorf("products hold %d units, want %d", total, s.Stock)
	}
	if ids := s.productIDs("row"); len(ids) != 20 || ids[0] != "row-p01" || ids[19] != "row-p20" {
		t.Errorf("productIDs = %q", ids)
	}
}

// Skew 0 is every product alike; a larger skew makes the hottest hotter.
func TestZipfShares(t *testing.T) {
	for _, p := range ZipfShares(4, 0) {
		if p != 0.25 {
			t.Fatalf("ZipfShares(4, 0) = %v, want even", ZipfShares(4, 0))
		}
	}
	if a, b := ZipfShares(20, 1.1)[0], ZipfShares(20, 2)[0]; !(a > 0.3 && a < 0.35 && b > a) {
		t.Errorf("hottest of 20: %.3f at 1.1, %.3f at 2; want about a third, then more", a, b)
	}
}

// A catalogue's settings are refused where they make no sense.
func TestCatalogueProblems(t *testing.T) {
	s := DefaultSettings()
	s.Products, s.Stock = 20, 10
	if bad := s.catalogueProblems(); len(bad) != 1 || !strings.HasPrefix(bad[0], "stock:") {
		t.Errorf("20 products, 10 units: %q", bad)
	}
	s.Stock, s.Skew = 100, -1
	if bad := s.catalogueProblems(); len(bad) != 1 || !strings.HasPrefix(bad[0], "skew:") {
		t.Errorf("skew -1: %q", bad)
	}
	s.Skew, s.Products, s.Stock = 1.1, MaxProducts+1, 2000
	if bad := s.catalogueProblems(); len(bad) != 1 || !strings.HasPrefix(bad[0], "products:") {
		t.Errorf("too many products: %q", bad)
	}
}

// ledgerResult is an answer to a request for url.
func ledgerResult(url string) vegeta.Result { return vegeta.Result{URL: url} }
