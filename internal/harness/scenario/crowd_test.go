package scenario

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestCrowdIsDeterministic(t *testing.T) {
	s := DefaultSettings()
	s.Users = 300
	a, b := newCrowd(s), newCrowd(s)
	if !slices.Equal(a.clicks, b.clicks) {
		t.Fatalf("two crowds from seed %d differ", s.Seed)
	}
	s.Seed++
	if c := newCrowd(s); slices.Equal(a.clicks, c.clicks) {
		t.Fatalf("crowds from seeds %d and %d are the same", s.Seed-1, s.Seed)
	}
}

func TestCrowdEveryBuyerClicksOneToN(t *testing.T) {
	s := DefaultSettings()
	s.Users, s.Clicks = 500, 3
	c := newCrowd(s)
	got := map[int]int{}
	perN := map[int]int{}
	for _, k := range c.clicks {
		got[k.user]++
	}
	if len(got) != s.Users {
		t.Fatalf("distinct buyers: got %d, want %d", len(got), s.Users)
	}
	for u, n := range got {
		if n < 1 || n > s.Clicks {
			t.Fatalf("buyer %d clicks %d times, want 1..%d", u, n, s.Clicks)
		}
		if n != c.buyers[u] {
			t.Fatalf("buyer %d: %d clicks in the stream, %d planned", u, n, c.buyers[u])
		}
		perN[n]++
	}
	for n := 1; n <= s.Clicks; n++ {
		if perN[n] == 0 {
			t.Errorf("no buyer clicks exactly %d times; want every count 1..%d represented", n, s.Clicks)
		}
	}
}

// A buyer's repeated clicks land within the click window of each other (in
// stream positions at the pacer's rate), interleaved with other buyers'.
func TestCrowdRepeatedClicksAreCloseAndInterleaved(t *testing.T) {
	s := DefaultSettings()
	s.Users, s.Clicks, s.Rate, s.ClickWindow = 1000, 3, 1000, 5*time.Millisecond
	c := newCrowd(s)
	first, last := map[int]int{}, map[int]int{}
	for i, k := range c.clicks {
		if _, ok := first[k.user]; !ok {
			first[k.user] = i
		}
		last[k.user] = i
	}
	// Window 5ms at 1000/s is 5 positions; neighbours' clicks can push a
	// click a few more positions away.
	interleaved := 0
	for u := range first {
		if span := last[u] - first[u]; span > 12 {
			t.Fatalf("buyer %d's clicks span %d positions (%v at %d/s), want a few ms", u, span, time.Duration(span)*time.Second/time.Duration(s.Rate), s.Rate)
		}
		for i := first[u]; i <= last[u]; i++ {
			if c.clicks[i].user != u {
				interleaved++
				break
			}
		}
	}
	if interleaved < len(first)/10 {
		t.Errorf("only %d of %d buyers have another buyer's click between theirs; want a crowd, not queues", interleaved, len(first))
	}
}

func TestCrowdTargetsSpreadOverShops(t *testing.T) {
	s := DefaultSettings()
	s.Users = 300
	shops := []string{"http://a", "http://b/", "http://c"}
	tgts := newCrowd(s).targets(shops, []string{"p1"}, clickTokens{})
	per := map[string]int{}
	for _, tg := range tgts {
		per[tg.URL]++
		var body struct {
			UserID    string `json:"user_id"`
			ProductID string `json:"product_id"`
			Quantity  int    `json:"quantity"`
		}
		if err := json.Unmarshal(tg.Body, &body); err != nil {
			t.Fatalf("body %s: %v", tg.Body, err)
		}
		if body.ProductID != "p1" || body.Quantity != 1 || body.UserID == "" || tg.Method != "POST" {
			t.Fatalf("target %s %s %s, want POST of a buyer's order for p1", tg.Method, tg.URL, tg.Body)
		}
	}
	for _, u := range []string{"http://a/api/v1/orders", "http://b/api/v1/orders", "http://c/api/v1/orders"} {
		if per[u] < len(tgts)/6 {
			t.Errorf("%s got %d of %d requests, want about a third", u, per[u], len(tgts))
		}
	}
}

func TestTargeterHandsOutEachTargetOnce(t *testing.T) {
	s := DefaultSettings()
	s.Users = 50
	tg := &targeter{targets: newCrowd(s).targets([]string{"http://x"}, []string{"p"}, clickTokens{})}
	tr := tg.Targeter()
	done := make(chan int)
	for range 4 {
		go func() {
			n := 0
			for {
				var tgt vegeta.Target
				if tr(&tgt) != nil {
					done <- n
					return
				}
				n++
			}
		}()
	}
	total := 0
	for range 4 {
		total += <-done
	}
	if total != len(tg.targets) || tg.Sent() != len(tg.targets) {
		t.Fatalf("handed out %d (Sent %d), want %d", total, tg.Sent(), len(tg.targets))
	}
}

func TestPacerStopsAfterN(t *testing.T) {
	p := newPacer(vegeta.Rate{Freq: 100, Per: time.Second}, 3)
	if _, stop := p.Pace(0, 2); stop {
		t.Fatalf("stopped after 2 hits, want 3")
	}
	if _, stop := p.Pace(0, 3); !stop {
		t.Fatalf("did not stop after 3 hits")
	}
}

func TestOpenCrowd(t *testing.T) {
	s := DefaultSettings()
	s.Users, s.Rate, s.RatePer, s.Duration = 0, 50, 100*time.Millisecond, 3*time.Second
	c := newCrowd(s)
	if got, want := len(c.clicks), 1500; got != want {
		t.Fatalf("open crowd at 50/100ms for 3s: %d clicks, want %d", got, want)
	}
	seen := map[int]bool{}
	for _, k := range c.clicks {
		if seen[k.user] || k.nth != 1 {
			t.Fatalf("buyer %d clicked again (nth %d): want a fresh buyer per click", k.user, k.nth)
		}
		seen[k.user] = true
	}
	if got := s.PlannedRequests(); got != 1500 {
		t.Errorf("PlannedRequests = %d, want 1500", got)
	}
}
