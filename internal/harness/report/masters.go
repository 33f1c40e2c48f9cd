package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// Where each row's load landed on a Redis Cluster: each master's part of
// the commands served while the row ran (StrategyResult.Load), from INFO
// commandstats read before and after it. One product's keys share its
// hash tag and so its master; a catalogue spreads over the masters.

// mastersLine is one row's load per master: "127.0.0.1:7301 62% (1204),
// 127.0.0.1:7302 21% (410), ..."; "" without a cluster.
func mastersLine(m *scenario.StrategyResult) string {
	parts := make([]string, 0, len(m.Load))
	for _, l := range m.Load {
		parts = append(parts, fmt.Sprintf("%s %.0f%% (%d)", l.Addr, 100*l.Share, l.Commands))
	}
	return strings.Join(parts, ", ")
}

// writeMastersMarkdown writes report.md's section on where the load
// landed: a line per row. Nothing if no row has a cluster's figures.
func writeMastersMarkdown(b *strings.Builder, o *scenario.Outcome) {
	lines := mastersLines(o)
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n## Where the load landed\n\n" + mastersIntro + "\n\n")
	for _, l := range lines {
		fmt.Fprintf(b, "- **%s**: %s\n", l.Strategy, l.Why)
	}
}

// mastersIntro says what the lines of where the load landed count.
const mastersIntro = "Each Redis Cluster master's share of the commands served from the start of the row to its end (INFO commandstats before and after, less INFO, CLUSTER, HELLO and the other connection bookkeeping), and how many. Every client of the cluster counts, not only these shops. Redlock's nodes are not the cluster's and are not counted."

// mastersLines are each row's masters line, with where its product (or
// its hottest) lives; none if no row has a cluster's figures.
func mastersLines(o *scenario.Outcome) []htmlWhy {
	if !slices.ContainsFunc(o.Strategies, func(m *scenario.StrategyResult) bool { return len(m.Load) > 0 }) {
		return nil
	}
	out := make([]htmlWhy, 0, len(o.Strategies))
	for _, m := range o.Strategies {
		line := mastersLine(m)
		if line == "" {
			line = "not read"
		}
		switch {
		case m.HotMaster != "" && len(m.Products) > 0:
			line += fmt.Sprintf("; %s, the hottest product, on %s", shortID(m.ProductID), m.HotMaster)
		case m.HotMaster != "":
			line += "; the product on " + m.HotMaster
		}
		out = append(out, htmlWhy{string(m.Strategy), line})
	}
	return out
}
