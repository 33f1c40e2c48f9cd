package bench

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestImpls checks that every adapter the benchmarks use really locks: a
// second try on a held key fails with errWaitedOut, a waiting acquire gets
// in once the holder releases, and nothing is left behind.
func TestImpls(t *testing.T) {
	for _, md := range modes {
		impls := md.impls(nodes)
		t.Cleanup(func() {
			for _, im := range impls {
				im.close()
			}
		})
		for _, im := range impls {
			t.Run(md.name+"/"+im.name, func(t *testing.T) {
				ctx := context.Background()
				key := newKey("check")
				release, err := im.lock(ctx, key, benchTTL, 0)
				if err != nil {
					t.Fatalf("first try: %v", err)
				}
				if _, err := im.lock(ctx, key, benchTTL, 0); !errors.Is(err, errWaitedOut) {
					t.Fatalf("second try on a held key: got %v, want %v", err, errWaitedOut)
				}

				got := make(chan error, 1)
				go func() {
					r, err := im.lock(ctx, key, benchTTL, 5*time.Second)
					if err == nil {
						err = r(ctx)
					}
					got <- err
				}()
				time.Sleep(20 * time.Millisecond)
				if err := release(ctx); err != nil {
					t.Fatalf("release: %v", err)
				}
				if err := <-got; err != nil {
					t.Fatalf("waiter after release: %v", err)
				}
				if n := leftovers(ctx, t, key); n != 0 {
					t.Errorf("%d keys left behind on the nodes after the releases", n)
				}
			})
		}
	}
}
