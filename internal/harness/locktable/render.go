package locktable

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Markdown writes t as Markdown sections: the independent keys beside the
// claims, the hot key, the ratios to single Redis beside the claimed ones,
// the order, and the first error of every cell that had any.
func (t *Table) Markdown(w io.Writer) {
	var b strings.Builder
	for j, c := range t.Cases {
		if c.Hot {
			continue
		}
		fmt.Fprintf(&b, "## %s, beside the claims\n\n", capitalize(c.Name()))
		b.WriteString("What a claimed TPS means: nobody waits for anybody. Each worker takes and releases a key of its own in a loop.\n\n")
		b.WriteString("| system | claimed TPS | claimed latency | ops/s | rounds | p50 | p99 | errors | client CPU | machine CPU |\n")
		b.WriteString("|---|---:|---|---:|---|---:|---:|---:|---:|---:|\n")
		for i, s := range t.Systems {
			cl := Claimed(s.Kind)
			tps := "none"
			if cl.TPS > 0 {
				tps = formatRate(float64(cl.TPS))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Name, tps, cl.Latency, t.measured(i, j))
		}
		b.WriteString("\n")
	}
	if hot := t.hotCases(); len(hot) > 0 {
		b.WriteString("## One hot key\n\n")
		b.WriteString("Every contender loops on the same key: each acquisition waits for the release before it, and the rate is the hand-off's.\n\n")
		b.WriteString("| system | contenders | ops/s | rounds | p50 | p99 | errors | client CPU | machine CPU |\n")
		b.WriteString("|---|---:|---:|---|---:|---:|---:|---:|---:|\n")
		for i, s := range t.Systems {
			for _, j := range hot {
				fmt.Fprintf(&b, "| %s | %d | %s |\n", s.Name, t.Cases[j].Workers, t.measured(i, j))
			}
		}
		b.WriteString("\n")
	}
	t.ratios(&b)
	t.order(&b)
	t.errors(&b)
	io.WriteString(w, b.String())
}

// measured is a cell's columns after the first: ops/s, the rounds' range,
// p50, p99, errors and the CPU shares; or the reason it was skipped.
func (t *Table) measured(i, j int) string {
	s := t.Systems[i]
	if s.Acquire == nil {
		return "skipped: " + s.Skip + " | | | | | | "
	}
	c := t.Cells[i][j]
	client, machine := "unknown", "unknown"
	if c.CPUKnown {
		client, machine = percent(c.Client), percent(c.Machine)
	}
	return fmt.Sprintf("%s | %s | %s | %s | %d | %s | %s",
		formatRate(c.Rate()), rateRange(c.Rates), formatLatency(c.P50), formatLatency(c.P99), c.Errors, client, machine)
}

// ratios writes how many times single Redis's rate each system's is, in
// every case, beside the claimed ratio.
func (t *Table) ratios(b *strings.Builder) {
	redis := t.index(SingleRedis)
	if redis < 0 || t.Systems[redis].Acquire == nil {
		b.WriteString("## Ratios to single Redis\n\nNot computed: single Redis was not measured.\n\n")
		return
	}
	b.WriteString("## Ratios to single Redis, beside the claimed ones\n\n")
	b.WriteString("How many times single Redis's ops/s each system's is (the claim: 10× Redlock, 100× ZooKeeper).\n\n")
	b.WriteString("| system | claimed |")
	for _, c := range t.Cases {
		fmt.Fprintf(b, " %s |", c.Name())
	}
	b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(t.Cases)) + "\n")
	for i, s := range t.Systems {
		if i == redis {
			continue
		}
		claimed := "none"
		if r := ClaimedRatio(s.Kind); r > 0 {
			claimed = formatRatio(r)
		}
		fmt.Fprintf(b, "| %s | %s |", s.Name, claimed)
		for j := range t.Cases {
			mine := t.Cells[i][j].Rate()
			if s.Acquire == nil || mine <= 0 {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(b, " %s |", formatRatio(t.Cells[redis][j].Rate()/mine))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// order writes the claimed order and, per case, the measured one, with
// every pair the measurement puts the other way round.
func (t *Table) order(b *strings.Builder) {
	b.WriteString("## The order, claimed and measured\n\n")
	var names []string
	for _, k := range ClaimedOrder() {
		names = append(names, k.String())
	}
	fmt.Fprintf(b, "- claimed: %s\n", strings.Join(names, " > "))
	for j, c := range t.Cases {
		order := t.Order(j)
		names = names[:0]
		for _, i := range order {
			names = append(names, t.Systems[i].Kind.String())
		}
		fmt.Fprintf(b, "- measured, %s: %s", c.Name(), strings.Join(names, " > "))
		if inv := t.Inversions(j); len(inv) > 0 {
			var pairs []string
			for _, p := range inv {
				pairs = append(pairs, fmt.Sprintf("%s above %s", p[0], p[1]))
			}
			fmt.Fprintf(b, " (against the claim: %s)", strings.Join(pairs, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// errors writes the first error of every cell that had any.
func (t *Table) errors(b *strings.Builder) {
	head := false
	for i, s := range t.Systems {
		for j, c := range t.Cases {
			cell := t.Cells[i][j]
			if cell.Errors == 0 {
				continue
			}
			if !head {
				b.WriteString("## Errors\n\n")
				head = true
			}
			fmt.Fprintf(b, "- %s, %s: %d, the first: %s\n", s.Name, c.Name(), cell.Errors, cell.FirstErr)
		}
	}
	if head {
		b.WriteString("\n")
	}
}

func (t *Table) hotCases() []int {
	var hot []int
	for j, c := range t.Cases {
		if c.Hot {
			hot = append(hot, j)
		}
	}
	return hot
}

// index returns the position of the first system of kind k, or -1.
func (t *Table) index(k Kind) int {
	for i, s := range t.Systems {
		if s.Kind == k {
			return i
		}
	}
	return -1
}

// formatRate writes a rate with thousands separators: 12,345.
func formatRate(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f", r)
	}
	s := fmt.Sprintf("%.0f", r)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// rateRange is the lowest and highest rate of the rounds, or "" for one.
func rateRange(rates []float64) string {
	if len(rates) < 2 {
		return ""
	}
	lo, hi := rates[0], rates[0]
	for _, r := range rates {
		lo, hi = min(lo, r), max(hi, r)
	}
	return formatRate(lo) + "–" + formatRate(hi)
}

// formatLatency writes d in milliseconds, two significant figures below
// 10 ms.
func formatLatency(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 1:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

func formatRatio(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f×", r)
	}
	return fmt.Sprintf("%.0f×", r)
}

func percent(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
