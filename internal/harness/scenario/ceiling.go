package scenario

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// CeilingResult is what Ceiling measured: how fast this machine's load
// generator can go when the server costs nearly nothing.
type CeilingResult struct {
	Workers  int
	Duration time.Duration
	Requests uint64
	// Rate is requests sent per second; Success the fraction answered 2xx.
	Rate     float64
	Success  float64
	P50, P99 time.Duration
}

// Ceiling measures the highest request rate the load generator sustains on
// this machine: the same Vegeta attacker as the scenario (keep-alive,
// same options) with an unlimited rate and a fixed number of workers, for d,
// against a trivial in-process endpoint on loopback that reads the order
// body and answers 201 with a small JSON body. The endpoint shares the CPU
// with the generator, as the embedded shops do, so the figure is what the
// generator can drive on this machine while a server runs beside it. The
// scenario's --rate should stay well below it. Ceiling is safe to call at
// any time; it returns ctx's error if ctx ends first.
func Ceiling(ctx context.Context, d time.Duration, workers int) (CeilingResult, error) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"00000000-0000-0000-0000-000000000000","user_id":"buyer-00001","product_id":"p","quantity":1}`)
	}))
	defer srv.Close()

	s := DefaultSettings()
	s.Users = 100_000
	tg := &targeter{targets: newCrowd(s).targets([]string{srv.URL}, []string{"p"}, clickTokens{})}
	atk, tr := newAttacker(Settings{Workers: uint64(workers), MaxWorkers: uint64(workers)})
	defer tr.CloseIdleConnections()
	// Rate zero means as fast as the workers go (Vegeta's -rate=0).
	results := atk.Attack(tg.Targeter(), newPacer(vegeta.Rate{}, len(tg.targets)), d, "ceiling")
	var m vegeta.Metrics
	done := ctx.Done()
	for r := range results {
		m.Add(r)
		select {
		case <-done:
			atk.Stop()
			done = nil
		default:
		}
	}
	m.Close()
	out := CeilingResult{Workers: workers, Duration: m.Duration, Requests: m.Requests, Rate: m.Rate,
		Success: m.Success, P50: m.Latencies.P50, P99: m.Latencies.P99}
	return out, ctx.Err()
}
