package tally

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The figure behind the table's cpu/order column: the CPU time the fleet
// spent on an attack, divided by the orders it made (and by the requests
// it answered). Throughput says how fast a strategy sells on this box;
// CPU per order says what each sale costs, which is what a bigger box or
// more shops would have to buy.
//
// What "the fleet" is depends on who started it. The embedded fleet runs
// in this process, beside its backends and the attacker, and no Go
// process can tell its goroutines' CPU apart: it is this process's CPU,
// shops, embedded backends and load generator together (ProcessCPU). A
// --targets fleet is separate processes: the sum of their
// process_cpu_seconds_total, which every shop's /metrics has (ScrapeCPU).
// Real database and Redis servers are never in it.

// CPUMeter reads a fleet's CPU time so far. Implementations must be safe
// for concurrent use.
type CPUMeter interface {
	CPU(ctx context.Context) (time.Duration, error)
	// Describe says whose CPU it reads, for the report.
	Describe() string
}

// ProcessCPU is the CPU of this process (user and system). It is safe for
// concurrent use.
type ProcessCPU struct{}

// CPU implements CPUMeter.
func (ProcessCPU) CPU(context.Context) (time.Duration, error) { return OwnCPU() }

// Describe implements CPUMeter.
func (ProcessCPU) Describe() string {
	return "the load generator's own process: the shops, the embedded backends and the attacker together"
}

// ScrapeCPU is the CPU of the shops at Targets, each read from its
// /metrics (process_cpu_seconds_total) with Client. It is safe for
// concurrent use.
type ScrapeCPU struct {
	Targets []string
	Client  *http.Client
}

// Describe implements CPUMeter.
func (s ScrapeCPU) Describe() string {
	return fmt.Sprintf("the %d shop processes (process_cpu_seconds_total on their /metrics)", len(s.Targets))
}

// CPU implements CPUMeter: the sum over the shops.
func (s ScrapeCPU) CPU(ctx context.Context) (time.Duration, error) {
	var total float64
	for _, t := range s.Targets {
		v, err := s.scrape(ctx, t)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return time.Duration(total * float64(time.Second)), nil
}

// scrape reads process_cpu_seconds_total from target's /metrics.
func (s ScrapeCPU) scrape(ctx context.Context, target string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("tally: read the CPU of %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("tally: read the CPU of %s: /metrics answered %s", target, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("tally: %s/metrics has no process_cpu_seconds_total", target)
}

// Spent measures what m reads between its call and the call of the
// function it returns; a failed read, or a nil m, makes the result unknown
// (-1).
func Spent(ctx context.Context, m CPUMeter) (stop func() time.Duration) {
	if m == nil {
		return func() time.Duration { return -1 }
	}
	before, err := m.CPU(ctx)
	return func() time.Duration {
		after, err2 := m.CPU(ctx)
		if err != nil || err2 != nil {
			return -1
		}
		return after - before
	}
}
