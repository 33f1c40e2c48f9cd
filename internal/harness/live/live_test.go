package live_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/live"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/harness/webfont"
)

// The events a page receives, without a browser: the state as it is when
// the page connects, every change after it, and the end of the stream once
// the run is done, with the report's figures.
func TestEvents(t *testing.T) {
	b := live.NewBoard("a test run", []scenario.Strategy{"lua"})
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	events := make(chan live.State)
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
			if err := json.Unmarshal([]byte(data), &st); err != nil {
				t.Error(err)
				return
			}
			events <- st
		}
	}()
	next := func() live.State {
		t.Helper()
		select {
		case st, ok := <-events:
			if !ok {
				t.Fatal("the stream ended early")
			}
			return st
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return live.State{}
	}

	if st := next(); st.Title != "a test run" || len(st.Rows) != 1 || st.Rows[0].State != "waiting" || st.Rows[0].UnitsLeft != nil {
		t.Fatalf("first event: %+v, want the lua row waiting, with no figures", st)
	}
	b.Watch(scenario.Snapshot{Strategy: scenario.Strategy("lua"), Sent: 7, Created: 3,
		Audit: &tally.Audit{InitialStock: 10, Stock: 7, Sold: 3}})
	if r := next().Rows[0]; r.State != "running" || r.Sent != 7 || *r.UnitsLeft != 7 || r.Sold != 3 {
		t.Fatalf("after a snapshot: %+v", r)
	}
	doc := report.Document{Strategies: []report.StrategyDoc{{Strategy: "lua", Sent: 20, OrdersPerSec: 12.5,
		Audit: tally.Audit{ProductID: "p", InitialStock: 10, Sold: 10}, Latency: report.LatencyDoc{P99: 4.25}}}}
	b.Finish(doc, nil)
	st := next()
	if r := st.Rows[0]; !st.Done || r.State != "done" || r.Sent != 20 || *r.UnitsLeft != 0 || r.Sold != 10 || r.OrdersPerSec != 12.5 || r.P99 != 4.25 {
		t.Fatalf("after Finish: %+v %+v, want the report's figures", st, r)
	}
	if _, ok := <-events; ok {
		t.Error("the stream goes on after the run is done")
	}
}

// A strategy cut short (Ctrl-C, or its final audit failed) has no audit in the
// report: the page keeps the last one it showed rather than zeros, and the
// strategies the run never reached say so.
func TestFinishKeepsTheLastAuditOfAModeCutShort(t *testing.T) {
	b := live.NewBoard("t", []scenario.Strategy{"lua", "fenced"})
	b.Watch(scenario.Snapshot{Strategy: "lua", Sent: 50,
		Audit: &tally.Audit{ProductID: "p", InitialStock: 100, Stock: 37, Sold: 63}})
	b.Finish(report.Document{Strategies: []report.StrategyDoc{{Strategy: "lua", Sent: 50}}}, errors.New("interrupted"))
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st live.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if r := st.Rows[0]; r.UnitsLeft == nil || *r.UnitsLeft != 37 || r.Sold != 63 || r.InitialStock != 100 {
		t.Errorf("lua at the end: %+v, want the last audit seen (37 of 100 left, 63 sold)", r)
	}
	if r := st.Rows[1]; r.State != "not run" {
		t.Errorf("fenced at the end: state %q, want \"not run\"", r.State)
	}
	if !st.Done || st.Err != "interrupted" {
		t.Errorf("state: done %v, error %q", st.Done, st.Err)
	}
}

// The page carries its own 双 in its style, in place of the comment that
// names it, so that its title reads without a CJK font.
func TestPageCarriesItsFont(t *testing.T) {
	srv := httptest.NewServer(live.NewBoard("a test run", []scenario.Strategy{"lua"}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	if !strings.Contains(page, webfont.FaceCSS) || strings.Contains(page, "/* webfont.FaceCSS") {
		t.Errorf("page: want webfont.FaceCSS in its style, in place of its comment")
	}
	if !strings.Contains(page, `"`+webfont.Family+`", sans-serif;`) {
		t.Errorf("page: want webfont's family in the font stack, before sans-serif")
	}
}
