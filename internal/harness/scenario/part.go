package scenario

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
)

// A crowd bigger than one generator is sent by several, each a Part of
// it (--part 2/3). Every part builds the whole crowd from the same seed
// and keeps the buyers whose number is I-1 mod N, so the parts are
// disjoint and together are the whole crowd; each sends its clicks at
// 1/N of the rate, so each click leaves about when it would leave one
// generator sending them all.
//
// The parts sell the same products, named by a --run-id they share.
// Part 1 creates them; the others wait for them to exist (PartWait)
// before they attack. No part audits: the audit reads the fleet once
// every part is done, and that is Merge's job (loadgen merge).
type Part struct{ I, N int }

// PartWait is how long a part other than the first waits for part 1 to
// create a row's product before it gives up (ErrPartWait).
const PartWait = 2 * time.Minute

// ErrPartWait is returned by Run when a part waited PartWait for a
// product part 1 never created.
var ErrPartWait = errors.New("scenario: part 1 did not create the product")

// ErrAdminToken is returned by Run when the fleet refused the admin token
// (401 or 403): waiting would not mend it.
var ErrAdminToken = errors.New("scenario: the fleet refused the admin token (--admin-token)")

// ParsePart parses "i/n", 1 <= i <= n.
func ParsePart(v string) (Part, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Part{}, fmt.Errorf("%q: want i/n with 1 <= i <= n, such as 2/3", v)
	}
	return Part{I: i, N: n}, nil
}

// Whole reports whether p is the whole crowd: no --part, or 1/1.
func (p Part) Whole() bool { return p.N <= 1 }

// String is "i/n", or "" for the whole crowd.
func (p Part) String() string {
	if p.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", p.I, p.N)
}

// owns reports whether buyer number user belongs to p.
func (p Part) owns(user int) bool { return p.Whole() || user%p.N == p.I-1 }

// rate is p's share of the whole crowd's rate r.
func (p Part) rate(r vegeta.Rate) vegeta.Rate {
	if !p.Whole() {
		r.Per *= time.Duration(p.N)
	}
	return r
}

// part is c with only p's buyers' clicks, in the same order.
func (c *crowd) part(p Part) *crowd {
	if p.Whole() {
		return c
	}
	out := &crowd{buyers: c.buyers, wants: c.wants}
	for _, k := range c.clicks {
		if p.owns(k.user) {
			out.clicks = append(out.clicks, k)
		}
	}
	return out
}

// createProducts creates the row's products, or, in a part other than
// the first, waits until part 1 has: the audit answers once a product
// exists. It returns ErrPartWait after PartWait, or ctx's error.
func (a *attack) createProducts(ctx context.Context) error {
	s := a.settings
	if s.Part.Whole() || s.Part.I == 1 {
		for i, id := range a.products {
			p := product(id, a.strategy, s)
			p.Stock = s.stockOf(i)
			if err := a.api.CreateProduct(ctx, p); err != nil {
				if sk, ok := payRefused(s, a.strategy, err); ok {
					return &skipError{sk}
				}
				return err
			}
		}
		return nil
	}
	deadline := time.Now().Add(PartWait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, id := range a.products {
		for {
			_, err := a.api.Audit(ctx, id)
			if err == nil {
				break
			}
			if se := (*fleet.StatusError)(nil); errors.As(err, &se) && se.Refused() {
				return fmt.Errorf("%w: %v", ErrAdminToken, err) // not a product still to come
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%w: %s in %v (%v)", ErrPartWait, id, PartWait, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
	}
	return nil
}
