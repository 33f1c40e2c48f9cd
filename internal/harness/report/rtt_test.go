package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/netsim"
)

// Every report's head states the round-trip time its run had, and says
// nothing of one when the run had none.
func TestReportsStateTheRTT(t *testing.T) {
	for _, tc := range []struct{ name, rtt, want string }{
		{"none", "", ""},
		{"every link", "2ms", "rtt 2ms"},
		{"per link", "db=2ms,redis=0.5ms", "rtt db=2ms,redis=500µs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := outcome()
			r, err := netsim.ParseRTT(tc.rtt)
			if err != nil {
				t.Fatal(err)
			}
			o.Settings.RTT = r

			var md, page bytes.Buffer
			if err := writeMarkdown(&md, o); err != nil {
				t.Fatal(err)
			}
			if err := writeHTML(&page, o); err != nil {
				t.Fatal(err)
			}
			head, _, _ := strings.Cut(md.String(), "\n")
			_, h1, _ := strings.Cut(page.String(), "<h1>")
			h1, _, _ = strings.Cut(h1, "</h1>")
			doc, err := json.Marshal(NewDocument(o))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Settings map[string]any `json:"settings"`
			}
			if err := json.Unmarshal(doc, &got); err != nil {
				t.Fatal(err)
			}
			jsonRTT, inJSON := got.Settings["rtt"]

			if tc.want == "" {
				if strings.Contains(head, "rtt") || strings.Contains(h1, "rtt") || inJSON {
					t.Errorf("a run without an rtt: report.md head %q, report.html h1 %q, report.json rtt %v; want no rtt", head, h1, jsonRTT)
				}
				return
			}
			if !strings.HasSuffix(head, ", "+tc.want) {
				t.Errorf("report.md head: %q, want it to end with %q", head, ", "+tc.want)
			}
			if !strings.Contains(h1, tc.want) {
				t.Errorf("report.html h1: %q, want it to say %q", h1, tc.want)
			}
			if want := strings.TrimPrefix(tc.want, "rtt "); jsonRTT != want {
				t.Errorf("report.json settings.rtt: %v, want %q", jsonRTT, want)
			}
			if !strings.Contains(md.String(), "--rtt "+r.String()) {
				t.Errorf("report.md's settings line does not repeat --rtt %s", r)
			}
		})
	}
}
