package tally

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestScrapeCPU sums process_cpu_seconds_total over the targets' /metrics.
func TestScrapeCPU(t *testing.T) {
	shop := func(cpu string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/metrics" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprintf(w, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"+
				"# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %s\ngo_goroutines 7\n", cpu)
		}))
	}
	a, b := shop("1.25"), shop("0.5")
	defer a.Close()
	defer b.Close()
	m := ScrapeCPU{Targets: []string{a.URL, b.URL}, Client: http.DefaultClient}
	got, err := m.CPU(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := 1750 * time.Millisecond; got != want {
		t.Errorf("CPU = %v, want %v", got, want)
	}

	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	m.Targets = append(m.Targets, none.URL)
	if _, err := m.CPU(t.Context()); err == nil {
		t.Error("CPU with a target that has no /metrics: no error")
	}
}

// TestProcessCPU reads this process's CPU time, which grows with work.
func TestProcessCPU(t *testing.T) {
	before, err := ProcessCPU{}.CPU(t.Context())
	if err != nil {
		t.Skipf("no process CPU time here: %v", err)
	}
	x := 0
	for after := before; after <= before; after, _ = (ProcessCPU{}).CPU(t.Context()) {
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
}

// A shop whose /metrics fails, or says nothing readable, makes the fleet's
// CPU unknown, with the shop named; the descriptions say whose CPU it is.
func TestScrapeCPUErrors(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"answered 500": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusInternalServerError) },
		"not a number": func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "process_cpu_seconds_total lots") },
	} {
		srv := httptest.NewServer(h)
		_, err := ScrapeCPU{Targets: []string{srv.URL}, Client: http.DefaultClient}.CPU(t.Context())
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		srv.Close()
	}
	if _, err := (ScrapeCPU{Targets: []string{"http://127.0.0.1:1"}, Client: http.DefaultClient}).CPU(t.Context()); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("unreachable shop: %v, want an error naming it", err)
	}
	if d := (ScrapeCPU{Targets: []string{"a", "b"}}).Describe(); !strings.Contains(d, "2 shop processes") {
		t.Errorf("Describe = %q", d)
	}
	if d := (ProcessCPU{}).Describe(); !strings.Contains(d, "own process") {
		t.Errorf("Describe = %q", d)
	}
}
