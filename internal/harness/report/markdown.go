package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// writeMarkdown writes the table as GitHub Markdown, ready to paste into a
// README, with the why-lines, the settings and the machine under it.
func writeMarkdown(w io.Writer, o *scenario.Outcome) error {
	var b strings.Builder
	s := o.Settings
	if len(o.Sweep) > 0 {
		fmt.Fprintf(&b, "# Double 11 (双11) flash sale: a sweep, %s%s\n\n", sweepRates(o), rttTitle(s))
		markdownTable(&b, SweepColumns, SweepRows(o))
		d := newSweepDoc(o)
		for _, l := range slices.Concat(rowLines(d, kneeLine), rowLines(d, heldLine), rowLines(d, ceilingLine)) {
			b.WriteString("- " + l + "\n")
		}
	} else {
		fmt.Fprintf(&b, "# Double 11 (双11) flash sale: %d buyers, %d units%s, %d req/s%s\n\n", s.Users, s.Stock, catalogueTitle(s), s.Rate, rttTitle(s))
		markdownTable(&b, Columns, append(Rows(o), skippedRows(o, Columns)...))
		writeLifeMarkdown(&b, o)
		for _, m := range o.Strategies {
			fmt.Fprintf(&b, "- **%s**: %s\n", m.Strategy, m.Why)
		}
		for _, sk := range o.Skipped {
			fmt.Fprintf(&b, "- **%s**: %s\n", sk.Strategy, skippedWhy(sk))
		}
		writeCatalogueMarkdown(&b, o)
		writeMastersMarkdown(&b, o)
	}
	for _, l := range RunNotes(o) {
		fmt.Fprintf(&b, "\n**%s**\n", l)
	}
	if bad := o.Unsafe(); len(bad) > 0 {
		fmt.Fprintf(&b, "\n**UNSAFE**: %s\n", strings.Join(bad, "; "))
	}
	if len(o.Sweep) > 0 {
		fmt.Fprintf(&b, "\nSettings at each rate: `%s`.\n\n%s\n", settingsLine(o), machineLine(o))
	} else {
		fmt.Fprintf(&b, "\nSettings: `%s` (%d clicks planned).\n\n%s\n", settingsLine(o), o.Settings.PlannedRequests(), machineLine(o))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownTable writes header and rows as a GitHub Markdown table, the
// first column left-aligned and every other right-aligned, and a blank
// line after it.
func markdownTable(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|---|" + strings.Repeat("---:|", len(header)-1) + "\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// sweepRates names a sweep's offered rates: "1000, 2000 and 4000 clicks/s
// offered".
func sweepRates(o *scenario.Outcome) string {
	rates := make([]string, len(o.Sweep))
	for i, p := range o.Sweep {
		rates[i] = strings.TrimSuffix(rateLabel(p.Rate), "/s")
	}
	if len(rates) == 1 {
		return rates[0] + " clicks/s offered"
	}
	return strings.Join(rates[:len(rates)-1], ", ") + " and " + rates[len(rates)-1] + " clicks/s offered"
}

// settingsLine is the scenario as the flags that repeat it.
func settingsLine(o *scenario.Outcome) string {
	s := o.Settings
	strategies := make([]string, len(s.Strategies))
	for i, m := range s.Strategies {
		strategies[i] = string(m)
	}
	rate := fmt.Sprintf("--rate %d", s.Rate)
	if len(o.Sweep) > 0 {
		rates := make([]string, len(o.Sweep))
		for i, p := range o.Sweep {
			rates[i] = scenario.FormatRate(p.Rate)
		}
		rate = "--sweep " + strings.Join(rates, ",")
	}
	line := fmt.Sprintf("--strategies %s --users %d --stock %d --clicks %d %s --duration %v --lock-ttl %v --work %v --stall %v --stall-rate %g --seed %d",
		strings.Join(strategies, ","), s.Users, s.Stock, s.Clicks, rate, s.Duration, s.LockTTL, s.Work, s.Stall, s.StallRate, s.Seed)
	for _, f := range s.Faults {
		line += " " + strings.Join(fault.Args(f), " ")
	}
	if s.LateCommit > 0 {
		line += fmt.Sprintf(" --late-commit %v --late-commit-every %d", s.LateCommit, s.LateCommitEvery)
	}
	if !s.RTT.IsZero() {
		line += " --rtt " + s.RTT.String()
	}
	return line + payFlags(o) + catalogueFlags(s)
}

// rttTitle is the round-trip time a run's links had, for a report's head:
// ", rtt 2ms", or nothing on loopback as it is.
func rttTitle(s scenario.Settings) string {
	if s.RTT.IsZero() {
		return ""
	}
	return ", rtt " + s.RTT.String()
}

// machineLine says where the run happened.
func machineLine(o *scenario.Outcome) string {
	e := o.Env
	cpu := e.CPUModel
	if cpu == "" {
		cpu = "unknown CPU"
	}
	return fmt.Sprintf("Machine: %d CPUs (%s), %s/%s, %s. Backend: %s. Shops: %s. Run took %.1fs.",
		e.NumCPU, cpu, e.GOOS, e.GOARCH, e.GoVersion, o.Backend, strings.Join(o.Targets, ", "), o.Wall.Seconds())
}

// RunNotes are the lines that say how o differs from one generator's
// complete run: a part of a crowd, a merge of parts, a run stopped early.
func RunNotes(o *scenario.Outcome) []string {
	var out []string
	if p := o.Settings.Part; !p.Whole() {
		out = append(out, fmt.Sprintf("Part %s of the crowd: its answers only, not audited; loadgen merge puts the parts together and audits the fleet once.", p))
	}
	if o.Parts > 0 {
		out = append(out, fmt.Sprintf("Merged from %d generators' parts of the crowd (loadgen merge): answers summed, latencies from their samples together, times from the longest part's own clock (the parts ran together), one audit of the fleet.", o.Parts))
	}
	if o.Stopped != "" {
		out = append(out, "Stopped early: "+o.Stopped)
	}
	return out
}
