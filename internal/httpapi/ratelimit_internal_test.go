package httpapi

import (
	"testing"
	"time"
)

// TestBuyerLimit: each buyer has a bucket of burst clicks, refilled at the
// rate; buyers do not share buckets.
func TestBuyerLimit(t *testing.T) {
	l := newBuyerLimit(0.001, 2) // refills one click in 1000 s: never, here
	for i, want := range []bool{true, true, false, false} {
		if got, _ := l.allow("alice"); got != want {
			t.Errorf("alice's click %d: allow = %v, want %v", i+1, got, want)
		}
	}
	if ok, _ := l.allow("bob"); !ok {
		t.Error("bob's first click refused: buckets are per buyer")
	}
	var none *buyerLimit
	if ok, _ := none.allow("alice"); !ok || newBuyerLimit(0, 5) != nil {
		t.Error("no rate must allow every click")
	}
}

// TestBuyerLimitForgetsIdleBuyers: a buyer untouched for two generations
// is dropped, and comes back with a full bucket; a crowd of fresh buyers
// does not grow the limiter for ever.
func TestBuyerLimitForgetsIdleBuyers(t *testing.T) {
	l := newBuyerLimit(0.001, 1)
	l.allow("alice")
	if ok, _ := l.allow("alice"); ok {
		t.Fatal("alice's second click allowed with a burst of 1")
	}
	for range 2 { // two turns of the generations
		l.turnsOver = time.Now().Add(-time.Nanosecond)
		l.allow("someone else")
	}
	if _, ok := l.young["alice"]; ok {
		t.Error("alice is still in the young generation")
	}
	if _, ok := l.old["alice"]; ok {
		t.Error("alice is still in the old generation")
	}
	if ok, _ := l.allow("alice"); !ok {
		t.Error("alice, forgotten, came back without a full bucket")
	}
}
