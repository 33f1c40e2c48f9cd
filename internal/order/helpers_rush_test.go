package order_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/order"
)

// The crowd the sale tests throw at a product: rush, and how its calls
// ended (outcomes). The other shared helpers are in helpers_test.go.

// outcomes counts how a rush of Place calls ended.
type outcomes struct {
	ok, soldOut, dupOrder, dupRequest, other atomic.Int64
}

// doorSize is how many Place calls rush lets run at once per shop, as a
// server's worker limit would. Without a door the first instant of a rush
// is 500 dedupe locks at once, for redlock 2,500 SETs, which on the embedded
// nodes (five miniredis servers sharing two cores with everything else)
// outlasts Redlock's per-node timeout.
const doorSize = 4

// maxTries bounds how often a buyer told to retry (retryable) tries again,
// as a client honouring Retry-After would. Nothing is written when Place
// says so, so a retry cannot double an order; the retries are counted and
// logged.
const maxTries = 20

// rush starts one goroutine per request, all at once, spread over shops
// round-robin, at most doorSize per shop inside Place at a time, and waits
// for them. A buyer told to retry (retryable) does so after a growing
// random pause (backoff).
// Other errors than the sold-out and duplicate answers are failures,
// reported on the test's goroutine.
func rush(t *testing.T, shops []*order.Service, reqs []order.Request) *outcomes {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		out      outcomes
		retries  atomic.Int64
		wg       sync.WaitGroup
		start    = make(chan struct{})
		failures = make(chan error, len(reqs))
		doors    = make([]chan struct{}, len(shops))
	)
	for i := range doors {
		doors[i] = make(chan struct{}, doorSize)
	}
	for i, req := range reqs {
		shop, door := shops[i%len(shops)], doors[i%len(shops)]
		wg.Go(func() {
			<-start
			var err error
			for try := 1; try <= maxTries; try++ {
				door <- struct{}{}
				_, err = shop.Place(ctx, req)
				<-door
				if !retryable(err) || try == maxTries {
					break
				}
				if retries.Add(1) <= 3 {
					t.Logf("retry after: %.300v", err.Error())
				}
				time.Sleep(backoff(try))
			}
			switch {
			case err == nil:
				out.ok.Add(1)
			case errors.Is(err, order.ErrSoldOut):
				out.soldOut.Add(1)
			case errors.Is(err, order.ErrDuplicateOrder):
				out.dupOrder.Add(1)
			case errors.Is(err, order.ErrDuplicateRequest):
				out.dupRequest.Add(1)
			default:
				out.other.Add(1)
				failures <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(failures)
	n := 0
	for err := range failures {
		if n++; n <= 5 {
			t.Errorf("Place: unexpected error: %v", err)
		}
	}
	if n > 5 {
		t.Errorf("... and %d more unexpected errors", n-5)
	}
	if r := retries.Load(); r > 0 {
		t.Logf("%d retries after an answer that says retry", r)
	}
	return &out
}

// retryable reports whether err is an answer after which nothing was
// written and the buyer may retry: the backend was unavailable, the
// crowd outran a sql-version buyer, or the product lock was lost or
// fenced out before the order was written (on a loaded machine a
// renewal can come later than a short lock TTL).
func retryable(err error) bool {
	return errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrVersionConflict) ||
		errors.Is(err, order.ErrLockLost) || errors.Is(err, order.ErrFencedOut)
}

// backoff is the pause before a buyer's next try after its try-th: 10 ms
// doubling up to half a second, plus up to as much again at random. The
// twenty tries then span about eight seconds, longer than a busy CI
// machine starves the embedded Redis nodes (Redlock's per-node budget is
// a tenth of the TTL).
func backoff(try int) time.Duration {
	d := min(10*time.Millisecond<<min(try-1, 6), 500*time.Millisecond)
	return d + rand.N(d)
}
