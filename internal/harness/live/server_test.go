package live_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/live"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// stream reads the events of the page at url into a channel, closed when
// the stream ends.
func stream(t *testing.T, url string) <-chan live.State {
	t.Helper()
	resp, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan live.State, 1000)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var st live.State
			if json.Unmarshal([]byte(data), &st) == nil {
				events <- st
			}
		}
	}()
	return events
}

// TestEventsCoalesce: snapshots that come faster than a page needs reach
// it at most ten a second (Handler's promise), and the last event always
// carries the last snapshot.
func TestEventsCoalesce(t *testing.T) {
	b := live.NewBoard("t", []scenario.Strategy{"lua"})
	s, err := live.Serve(b, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events := stream(t, s.URL)
	<-events // the state as the page connected
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	sent := 0
	for time.Since(start) < 500*time.Millisecond { // a snapshot every millisecond
		<-tick.C
		sent++
		b.Watch(scenario.Snapshot{Strategy: "lua", Sent: sent})
	}
	got := 0
	deadline := time.After(10 * time.Second)
	for last := 0; last != sent; {
		select {
		case st := <-events:
			got++
			last = st.Rows[0].Sent
		case <-deadline:
			t.Fatalf("no event with the last snapshot (sent %d) within 10s; %d events", sent, got)
		}
	}
	elapsed := time.Since(start)
	if limit := int(elapsed/(100*time.Millisecond)) + 1; got > limit {
		t.Errorf("%d events in %v for %d snapshots, want at most %d (ten a second)", got, elapsed, sent, limit)
	}
}

// TestCloseEndsOpenPages: Close returns, and ends the stream of a page
// still watching a run that is not done, so that a page left open does
// not keep the load generator from exiting.
func TestCloseEndsOpenPages(t *testing.T) {
	b := live.NewBoard("t", []scenario.Strategy{"lua"})
	s, err := live.Serve(b, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	events := stream(t, s.URL)
	<-events
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10s with a page open")
	}
	timeout := time.After(10 * time.Second)
	for ended := false; !ended; {
		select {
		case _, ok := <-events:
			ended = !ok
		case <-timeout:
			t.Fatal("the page's stream goes on after Close")
		}
	}
	if _, err := http.Get(s.URL + "state"); err == nil {
		t.Error("GET /state answered after Close")
	}
}
