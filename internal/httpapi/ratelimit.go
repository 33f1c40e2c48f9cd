package httpapi

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// buyerLimit is the anti-bot guard every flash-sale system has at its
// entry: one buyer (user_id) may send at most rate orders per second, in
// bursts of burst, and the clicks beyond get 429 rate_limited at once,
// before they queue at the door or reach Redis. Each buyer has a token
// bucket (golang.org/x/time/rate).
//
// It is per router, so per shop: behind a load balancer that spreads one
// buyer over k shops, the buyer gets k times the rate. A fleet-wide limit
// would cost every click a round trip to Redis; production puts this one
// at the gateway, in front of every shop.
//
// A crowd of fresh buyers must not grow it without bound. A bucket left
// alone for idle (burst ÷ rate, at least a second) is full again, the same
// as a new one, so buckets live in two generations: every idle, the older
// is dropped and the newer becomes the older; a buyer found in the older is
// moved back into the newer.
type buyerLimit struct {
	rate  rate.Limit
	burst int
	idle  time.Duration

	mu        sync.Mutex
	young     map[string]*rate.Limiter
	old       map[string]*rate.Limiter
	turnsOver time.Time // when young becomes old
}

// newBuyerLimit returns the guard for perSecond orders per buyer, in
// bursts of burst (at least 1); nil, which allows every order, if
// perSecond is not positive.
func newBuyerLimit(perSecond float64, burst int) *buyerLimit {
	if perSecond <= 0 {
		return nil
	}
	burst = max(burst, 1)
	idle := max(time.Duration(float64(burst)/perSecond*float64(time.Second)), time.Second)
	return &buyerLimit{rate: rate.Limit(perSecond), burst: burst, idle: idle,
		young: map[string]*rate.Limiter{}, old: map[string]*rate.Limiter{}}
}

// allow reports whether buyer may order now, and takes a token if so;
// if not, it says how long until the buyer's bucket holds one again. A
// nil *buyerLimit allows everything. Safe for concurrent use.
func (l *buyerLimit) allow(buyer string) (ok bool, retryIn time.Duration) {
	if l == nil {
		return true, 0
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.turnsOver) {
		l.old, l.young = l.young, make(map[string]*rate.Limiter, len(l.young))
		l.turnsOver = now.Add(l.idle)
	}
	b, young := l.young[buyer]
	if !young {
		if older, found := l.old[buyer]; found {
			b = older
			delete(l.old, buyer)
		} else {
			b = rate.NewLimiter(l.rate, l.burst)
		}
		l.young[buyer] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now) // the token stays for the click that comes then
		return false, d
	}
	return true, 0
}

// rateLimitedError is the guard's 429: nothing was written; the buyer's
// bucket holds a token again in retryIn.
type rateLimitedError struct{ retryIn time.Duration }

func (e *rateLimitedError) Error() string {
	return "too many orders from this buyer; nothing was written; retry later"
}

func (e *rateLimitedError) Unwrap() error { return errRateLimited }

// RetryAfter is the Retry-After header's value in seconds.
func (e *rateLimitedError) RetryAfter() string { return wholeSeconds(e.retryIn) }
