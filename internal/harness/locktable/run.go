package locktable

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// Cell is what was measured for one system in one case, over every round.
type Cell struct {
	Rates    []float64     // cycles per second, one per round
	P50, P99 time.Duration // of every cycle of every round
	Cycles   int           // latencies the percentiles are of
	Errors   int           // acquires and releases that failed
	FirstErr string        // the first of them, as it read
	Client   float64       // this process's share of the cores, median of the rounds
	Machine  float64       // the machine's busy share, median of the rounds
	CPUKnown bool
}

// Rate is the median of the rounds' rates.
func (c Cell) Rate() float64 { return median(c.Rates) }

// Table is a whole run: every system in every case.
type Table struct {
	Systems []System
	Cases   []Case
	Options Options
	Cells   [][]Cell // [system][case]; zero for a skipped system
	Took    time.Duration
}

// Run measures every system that has an Acquire in every case, o.Rounds
// times, interleaved: each round measures every case, and each case every
// system, in order. It writes a line per cell to progress (nil: none). It
// returns an error only if ctx ends first, or if o or a case cannot work;
// a lock that fails is counted in its cell's Errors.
func Run(ctx context.Context, systems []System, cases []Case, o Options, progress io.Writer) (*Table, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	for _, c := range cases {
		if c.Workers <= 0 {
			return nil, fmt.Errorf("locktable: %s: no workers", c.Name())
		}
	}
	if progress == nil {
		progress = io.Discard
	}
	began := time.Now()
	t := &Table{Systems: systems, Cases: cases, Options: o, Cells: make([][]Cell, len(systems))}
	lat := make([][][]time.Duration, len(systems))
	client := make([][][]float64, len(systems))
	machine := make([][][]float64, len(systems))
	for i := range systems {
		t.Cells[i] = make([]Cell, len(cases))
		lat[i] = make([][]time.Duration, len(cases))
		client[i] = make([][]float64, len(cases))
		machine[i] = make([][]float64, len(cases))
	}
	for r := range o.Rounds {
		for j, c := range cases {
			for i, sys := range systems {
				if sys.Acquire == nil {
					continue
				}
				s := measure(ctx, sys.Acquire, c, o)
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("locktable: stopped during round %d, %s, %s: %w", r+1, c.Name(), sys.Name, err)
				}
				cell := &t.Cells[i][j]
				rate := float64(s.ops) / s.window.Seconds()
				cell.Rates = append(cell.Rates, rate)
				cell.Errors += s.errs
				if cell.FirstErr == "" && s.firstErr != nil {
					cell.FirstErr = s.firstErr.Error()
				}
				lat[i][j] = append(lat[i][j], s.lat...)
				if s.cpu.Known {
					client[i][j] = append(client[i][j], s.cpu.Client)
					machine[i][j] = append(machine[i][j], s.cpu.Machine)
				}
				fmt.Fprintf(progress, "round %d/%d, %s, %s: %.0f ops/s, %d errors\n",
					r+1, o.Rounds, c.Name(), sys.Name, rate, s.errs)
			}
		}
	}
	for i := range systems {
		for j := range cases {
			cell := &t.Cells[i][j]
			l := lat[i][j]
			slices.Sort(l)
			cell.Cycles, cell.P50, cell.P99 = len(l), percentile(l, 50), percentile(l, 99)
			if len(client[i][j]) > 0 {
				cell.Client, cell.Machine, cell.CPUKnown = median(client[i][j]), median(machine[i][j]), true
			}
		}
	}
	t.Took = time.Since(began)
	return t, nil
}
