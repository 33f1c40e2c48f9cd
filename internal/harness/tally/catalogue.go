package tally

import (
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A catalogue row sells several products to one crowd. Each product is
// audited on its own, from its own answers, and the row's figures are the
// sums of the products' figures: a unit one product oversold is never
// netted against a unit another left unsold.

// ProductFigures are one product's figures in a catalogue row: its share
// of the crowd, its answers, and the shop's audit of it alone. The zero
// value is ready to use; it is not safe for concurrent use.
type ProductFigures struct {
	ID string `json:"product_id"`
	// Buyers and Clicks are the crowd's buyers the draw sent to this
	// product, and their clicks.
	Buyers int `json:"buyers"`
	Clicks int `json:"clicks"`
	// Tally counts the answers to this product's clicks only.
	Tally Answers `json:"answers"`
	// Audit is the shop's audit of this product (its own orders, its
	// own stock, its own Redis keys).
	Audit Audit `json:"audit"`
	// Lost and EarlySoldOut are Unwritten and EarlySoldOut over this
	// product's answers only.
	Lost         int `json:"lost_orders"`
	EarlySoldOut int `json:"early_sold_out,omitempty"`
}

// Exact reports whether p sold no more than its stock, duplicated no
// order, left its database, Redis and answers agreeing, lost no order
// and turned no buyer away from a unit that was there.
func (p ProductFigures) Exact() bool {
	a := p.Audit
	return a.Oversold == 0 && a.DuplicateOrders == 0 && a.Consistent && (a.Drift == nil || *a.Drift == 0) &&
		p.Lost == 0 && p.EarlySoldOut == 0
}

// TagURL marks url as a request for product, in its fragment: a client
// never sends a fragment, so the shop sees the same request, and Vegeta
// keeps the URL in each result, so ByProduct can tell whose answer it is.
func TagURL(url, product string) string { return url + "#" + product }

// ProductOf is the product TagURL marked r's request for; "" if none.
func ProductOf(r *vegeta.Result) string {
	_, p, _ := strings.Cut(r.URL, "#")
	return p
}

// ByProduct splits results by ProductOf, keeping each product's answers
// in the order they came. A result of a product not in ids is dropped.
func ByProduct(results vegeta.Results, ids []string) map[string]vegeta.Results {
	out := make(map[string]vegeta.Results, len(ids))
	for _, id := range ids {
		out[id] = nil
	}
	for _, r := range results {
		p := ProductOf(&r)
		if rs, ok := out[p]; ok {
			out[p] = append(rs, r)
		}
	}
	return out
}

// SumAudits is the audit of a catalogue row: each count the sum of the
// products' counts, Oversold included (never the total sold less the
// total stock), consistent only if every product is, and the Redis drift
// and queue backlog summed over the products that report them (nil if
// none does). The first RedisError is kept. Buckets are left out: each
// product's are in its own audit. ProductID and Strategy are the first
// audit's.
func SumAudits(audits []Audit) Audit {
	var s Audit
	s.Consistent = true
	for i, a := range audits {
		if i == 0 {
			s.ProductID, s.Strategy = a.ProductID, a.Strategy
		}
		s.InitialStock += a.InitialStock
		s.Stock += a.Stock
		s.Orders += a.Orders
		s.Sold += a.Sold
		s.Oversold += a.Oversold
		s.DuplicateOrders += a.DuplicateOrders
		s.Consistent = s.Consistent && a.Consistent
		s.RedisStock = addPtr(s.RedisStock, a.RedisStock)
		s.Drift = addPtr(s.Drift, a.Drift)
		s.QueueLength = addPtr(s.QueueLength, a.QueueLength)
		s.QueuePending = addPtr(s.QueuePending, a.QueuePending)
		if s.RedisError == "" {
			s.RedisError = a.RedisError
		}
	}
	return s
}

// addPtr adds b to a, either absent (nil); nil only if both are.
func addPtr[T int | int64](a, b *T) *T {
	switch {
	case b == nil:
		return a
	case a == nil:
		v := *b
		return &v
	}
	v := *a + *b
	return &v
}
