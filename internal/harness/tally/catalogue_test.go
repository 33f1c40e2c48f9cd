package tally

import (
	"reflect"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func intp(v int) *int { return &v }

// A catalogue row's figures are the products' figures summed: an oversold
// unit of one product is never netted against another's unsold stock, one
// inconsistent product makes the row inconsistent, and drift is summed over
// the products that report it.
func TestSumAudits(t *testing.T) {
	exact := Audit{ProductID: "a", Strategy: "lua", InitialStock: 10, Stock: 0, Orders: 10, Sold: 10, Consistent: true}
	unsold := Audit{ProductID: "b", Strategy: "lua", InitialStock: 10, Stock: 7, Orders: 3, Sold: 3, Consistent: true}
	over := Audit{ProductID: "c", Strategy: "lua", InitialStock: 5, Stock: 0, Orders: 8, Sold: 8, Oversold: 3, DuplicateOrders: 1}
	for _, tc := range []struct {
		name   string
		audits []Audit
		want   Audit
	}{
		{"one product is itself", []Audit{exact}, exact},
		{"exact products sum", []Audit{exact, unsold},
			Audit{ProductID: "a", Strategy: "lua", InitialStock: 20, Stock: 7, Orders: 13, Sold: 13, Consistent: true}},
		{"oversold is not netted against unsold stock", []Audit{unsold, over},
			Audit{ProductID: "b", Strategy: "lua", InitialStock: 15, Stock: 7, Orders: 11, Sold: 11, Oversold: 3, DuplicateOrders: 1}},
		{"drift summed where reported",
			[]Audit{{Consistent: true, RedisStock: intp(2), Drift: intp(1)}, {Consistent: true}, {Consistent: true, RedisStock: intp(0), Drift: intp(-1), RedisError: "down"}},
			Audit{Consistent: true, RedisStock: intp(2), Drift: intp(0), RedisError: "down"}},
		{"no product", nil, Audit{Consistent: true}},
	} {
		if got := SumAudits(tc.audits); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: SumAudits = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// answer is a result for product, sent at ms milliseconds and answered
// 1 ms later.
func answer(product string, ms int, code uint16, b string) vegeta.Result {
	t0 := time.Unix(0, 0)
	return vegeta.Result{URL: TagURL("http://shop/api/v1/orders", product), Code: code, Body: []byte(b),
		Timestamp: t0.Add(time.Duration(ms) * time.Millisecond), Latency: time.Millisecond}
}

// One product's traffic cannot change another's figures: a's answers,
// tally and early-sold-out count are the same whatever b's crowd did, even
// when b's orders came long after a's sold-out answers (which, counted in
// one pool, would make a's buyers look turned away from b's units).
func TestByProductIsolates(t *testing.T) {
	soldOut := `{"error":{"code":"sold_out"}}`
	a := vegeta.Results{answer("a", 0, 201, `{"id":"1"}`), answer("a", 5, 409, soldOut), answer("a", 6, 409, soldOut)}
	for _, tc := range []struct {
		name string
		b    vegeta.Results
	}{
		{"b silent", nil},
		{"b sells late", vegeta.Results{answer("b", 50, 201, `{"id":"2"}`), answer("b", 60, 201, `{"id":"3"}`)}},
		{"b sold out early", vegeta.Results{answer("b", 1, 409, soldOut), answer("b", 70, 503, `{"error":{"code":"busy"}}`)}},
		{"untagged traffic", vegeta.Results{{URL: "http://shop/api/v1/orders", Code: 201, Body: []byte(`{"id":"9"}`)}}},
	} {
		all := append(append(vegeta.Results{}, a...), tc.b...)
		by := ByProduct(all, []string{"a", "b"})
		if !reflect.DeepEqual(by["a"], a) {
			t.Errorf("%s: a's answers = %v, want its own %v", tc.name, by["a"], a)
		}
		var ta Answers
		for i := range by["a"] {
			ta.Add(&by["a"][i])
		}
		if ta.Created != 1 || ta.SoldOut != 2 || ta.Requests != 3 {
			t.Errorf("%s: a's tally = %+v, want 1 created, 2 sold out of 3", tc.name, ta)
		}
		if n := EarlySoldOut(by["a"]); n != 0 {
			t.Errorf("%s: a's early sold-out = %d, want 0: its sold-outs came after its last order", tc.name, n)
		}
		if len(tc.b) > 0 && tc.name != "untagged traffic" && len(by["b"]) != len(tc.b) {
			t.Errorf("%s: b's answers = %d, want %d", tc.name, len(by["b"]), len(tc.b))
		}
		if tc.name == "b sells late" && EarlySoldOut(all) == 0 {
			t.Errorf("%s: pooled, a's sold-outs before b's orders should look early: the split is what keeps them apart", tc.name)
		}
	}
}

// A product is exact only if every one of its own figures is.
func TestProductExact(t *testing.T) {
	ok := Audit{Consistent: true, Drift: intp(0)}
	for _, tc := range []struct {
		p    ProductFigures
		want bool
	}{
		{ProductFigures{Audit: ok}, true},
		{ProductFigures{Audit: Audit{Consistent: true, Oversold: 1}}, false},
		{ProductFigures{Audit: Audit{Consistent: true, DuplicateOrders: 1}}, false},
		{ProductFigures{Audit: Audit{}}, false},
		{ProductFigures{Audit: Audit{Consistent: true, Drift: intp(2)}}, false},
		{ProductFigures{Audit: ok, Lost: 1}, false},
		{ProductFigures{Audit: ok, EarlySoldOut: 1}, false},
	} {
		if got := tc.p.Exact(); got != tc.want {
			t.Errorf("%+v.Exact() = %v, want %v", tc.p, got, tc.want)
		}
	}
}
