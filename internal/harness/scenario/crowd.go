package scenario

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// A click is one request of the crowd: one buyer pressing "buy" once.
type click struct {
	user    int     // buyer number, 0..Users-1
	nth     int     // 1 for the buyer's first click, 2 for the second...
	shop    uint32  // picks the shop replica (mod the number of targets)
	at      float64 // position in the stream, in requests since the start
	product int     // the product the buyer wants: 0, the hottest, unless a catalogue
}

// crowd is the whole sale's clicks, in the order they are sent.
type crowd struct {
	clicks []click
	buyers []int // clicks per buyer, indexed by buyer number
	wants  []int // the product each buyer wants (drawProducts), by buyer number
}

// newCrowd builds the crowd from s.Seed, so the same settings always make
// the same crowd: the same buyers, clicking the same number of times, in the
// same order, on the same shops.
//
// Buyers arrive one after another in a shuffled order. Each clicks 1..Clicks
// times; the first click lands where the buyer arrives in the stream and
// every further click a random fraction of ClickWindow later. The pacer sends
// Rate requests a second, so ClickWindow spans ClickWindow·Rate positions;
// sorting by position interleaves neighbouring buyers' repeated clicks the
// way a real crowd's do, which is what the dedupe lock must absorb.
//
// With Users 0 the crowd is an open model instead (openCrowd). In a
// catalogue each buyer wants one product (drawProducts), every click of
// theirs on it.
func newCrowd(s Settings) *crowd {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	if s.Open() {
		return openCrowd(s, rng)
	}
	order := rng.Perm(max(s.Users, 0))
	window := s.ClickWindow.Seconds() * s.PerSecond()

	c := &crowd{buyers: make([]int, max(s.Users, 0)), wants: s.drawProducts(max(s.Users, 0))}
	pos := 0.0
	for _, user := range order {
		n := 1 + rng.IntN(max(s.Clicks, 1))
		c.buyers[user] = n
		for k := 1; k <= n; k++ {
			at := pos
			if k > 1 {
				at += rng.Float64() * window
			}
			c.clicks = append(c.clicks, click{user: user, nth: k, shop: rng.Uint32(), at: at, product: c.wants[user]})
		}
		pos += float64(n)
	}
	slices.SortStableFunc(c.clicks, func(a, b click) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	return c
}

// openCrowd is the open model's crowd: a fresh buyer for every click,
// each clicking once, as many clicks as the rate sends in Duration, each on
// a shop drawn from rng. Nobody clicks twice, so no dedupe lock is tested:
// it measures what the shops serve, not what they refuse.
func openCrowd(s Settings, rng *rand.Rand) *crowd {
	n := s.openClicks()
	c := &crowd{clicks: make([]click, n), buyers: make([]int, n), wants: s.drawProducts(n)}
	for i := range n {
		c.clicks[i] = click{user: i, nth: 1, shop: rng.Uint32(), at: float64(i), product: c.wants[i]}
		c.buyers[i] = 1
	}
	return c
}

// userID names buyer n in requests and in the shop's orders table.
func userID(n int) string { return fmt.Sprintf("buyer-%05d", n) }

// targets turns the crowd into Vegeta targets: POST /api/v1/orders on one of
// the shop base URLs, for the product each click wants, products[k] for
// product k, each with its buyer's token if tokens signs. In a catalogue
// (more than one product) each URL is tagged with its product
// (tally.TagURL), so that each answer can be counted for its product
// alone.
func (c *crowd) targets(shops []string, products []string, tokens clickTokens) []vegeta.Target {
	base := http.Header{"Content-Type": []string{"application/json"}}
	headers := map[int]http.Header{} // one per buyer: their clicks share it
	out := make([]vegeta.Target, len(c.clicks))
	for i, k := range c.clicks {
		header, ok := headers[k.user]
		if !ok {
			header = tokens.headers(base, userID(k.user))
			headers[k.user] = header
		}
		shop := strings.TrimRight(shops[int(k.shop%uint32(len(shops)))], "/")
		id := products[k.product]
		body := `{"user_id":"` + userID(k.user) + `","product_id":` + strconv.Quote(id) + `,"quantity":1}`
		url := shop + "/api/v1/orders"
		if len(products) > 1 {
			url = tally.TagURL(url, id)
		}
		out[i] = vegeta.Target{Method: http.MethodPost, URL: url, Body: []byte(body), Header: header}
	}
	return out
}

// share is how many of the crowd's buyers want product p, and how many
// clicks they make.
func (c *crowd) share(p int) (buyers, clicks int) {
	for b, w := range c.wants {
		if w == p {
			buyers++
			clicks += c.buyers[b]
		}
	}
	return buyers, clicks
}

// targeter hands out targets in order, each once, and counts how many it
// handed out. It is safe for concurrent use, as Vegeta's workers require.
type targeter struct {
	targets []vegeta.Target
	next    atomic.Uint64
}

// Targeter returns the Vegeta Targeter. After the last target it returns
// vegeta.ErrNoTargets, which stops the attack; the pacer returned by pacer
// stops it one hit earlier, so that error never becomes a result.
func (t *targeter) Targeter() vegeta.Targeter {
	return func(tgt *vegeta.Target) error {
		i := t.next.Add(1) - 1
		if i >= uint64(len(t.targets)) {
			return vegeta.ErrNoTargets
		}
		*tgt = t.targets[i]
		return nil
	}
}

// Sent is how many targets were handed out so far: requests sent.
func (t *targeter) Sent() int { return int(min(t.next.Load(), uint64(len(t.targets)))) }

// countedPacer is Vegeta's constant rate, stopped after n hits so that an
// attack ends once every buyer has clicked.
type countedPacer struct {
	vegeta.ConstantPacer
	n uint64
}

// newPacer paces hits at rate, n hits in all. A zero Freq means as fast as
// the workers go (Vegeta's -rate=0).
func newPacer(rate vegeta.Rate, n int) countedPacer {
	if rate.Per == 0 {
		rate.Per = time.Second
	}
	return countedPacer{ConstantPacer: rate, n: uint64(n)}
}

// Pace implements vegeta.Pacer.
func (p countedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= p.n {
		return 0, true
	}
	return p.ConstantPacer.Pace(elapsed, hits)
}
