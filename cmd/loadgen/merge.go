package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flashsale/flashsale/internal/flagenv"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
)

const mergeUsage = `Usage: loadgen merge --targets URL,... --admin-token T PART-DIR...

Puts together the report folders of the generators that each sent a part of
one crowd (loadgen --part i/n, every part's folder given once), once every
part is done, and writes one report of the whole crowd into a new folder
under --out: each row's answers are the parts' summed, its latencies are
those of every part's raw results (results-<strategy>.bin) together, never an
average of the parts' percentiles, and its audit (the shop's count, the
queue's drain, the answered orders not written, the events) is read once
from the --targets fleet, with the admin token the parts used. The parts'
other flags are read from their report.json and must agree. A row's
duration and rate are the longest part's, by its own clock; the parts
must have run together (by their clocks, within a second), each
finished, each given once.

Exit codes as loadgen's: 0 done; 1 the merge or the audit failed; 2 bad
arguments or parts that do not make one crowd (a part stopped, given
twice, or not run with the others); 3 and 99 as --fail-on-unsafe
and --threshold of the parts say.

Flags:
`

// mergeIgnored are the flags the parts may differ in.
var mergeIgnored = []string{"part", "out", "cpuprofile", "live", "live-addr"}

// merge is the merge subcommand: it returns the exit code.
func merge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	targets := fs.String("targets", "", "the fleet the parts attacked, shop base URLs, comma-separated (required)")
	token := fs.String("admin-token", "", "its admin token, to read the audits (required)")
	out := fs.String("out", "loadgen-report", "folder for the merged report; it writes a timestamped subfolder")
	err := flagenv.SetFromEnv(fs, envPrefix, os.Getenv)
	if err == nil {
		err = fs.Parse(args)
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, mergeUsage)
		flagenv.PrintFlags(stdout, fs, envPrefix, nil)
		return exitOK
	}
	var cfg config
	var rows []scenario.PartsRow
	if err == nil {
		cfg, rows, err = readParts(fs.Args(), *targets, *token, *out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgen merge: %v\nRun 'loadgen merge --help' for its usage.\n", err)
		return exitUsage
	}
	if err := mergeParts(ctx, cfg, len(fs.Args()), rows, stdout); err != nil {
		fmt.Fprintf(stderr, "loadgen merge: %v\n", err)
		switch {
		case errors.Is(err, errUnsafe):
			return exitUnsafe
		case errors.Is(err, errThreshold):
			return exitThreshold
		}
		return exitFailed
	}
	return exitOK
}

// readParts reads the part folders dirs: the whole crowd's flags from
// the first part's report.json, with --targets, --admin-token and --out
// the merge's own, and each row's answers from every part. The parts must
// be 1/n..n/n of one crowd, each once and from one run (Instance), each
// finished, with the same flags but for mergeIgnored, and each row's
// attacks must have overlapped in time (scenario.Apart).
func readParts(dirs []string, targets, token, out string) (config, []scenario.PartsRow, error) {
	var cfg config
	if len(dirs) == 0 {
		return cfg, nil, errors.New("no part folders given")
	}
	docs := make([]report.Document, len(dirs))
	seen, runs := map[string]string{}, map[string]string{}
	for i, dir := range dirs {
		d, err := readReportFile(dir)
		if err != nil {
			return cfg, nil, err
		}
		part := d.Settings.Part
		if _, err := scenario.ParsePart(part); err != nil {
			return cfg, nil, fmt.Errorf("%s: not a part of a crowd (loadgen --part i/n)", dir)
		}
		if d.PartRun == nil {
			return cfg, nil, fmt.Errorf("%s: part %s's report does not say whether it finished (an older loadgen): run the parts again", dir, part)
		}
		if other, ok := runs[d.PartRun.Instance]; ok {
			return cfg, nil, fmt.Errorf("%s and %s are one run of part %s given twice", other, dir, part)
		}
		runs[d.PartRun.Instance] = dir
		if !d.PartRun.Finished {
			return cfg, nil, fmt.Errorf("%s: part %s was stopped before it finished (%s): its rows are short; run the crowd again, with a new --run-id", dir, part, d.Stopped)
		}
		if other, ok := seen[part]; ok {
			return cfg, nil, fmt.Errorf("%s and %s are both part %s: two runs of one part (a --run-id used twice?)", other, dir, part)
		}
		seen[part] = dir
		if i > 0 && !maps.Equal(sharedFlags(d.Flags), sharedFlags(docs[0].Flags)) {
			return cfg, nil, fmt.Errorf("%s and %s differ in flags other than %s: not parts of one crowd", dirs[0], dir, strings.Join(mergeIgnored, ", "))
		}
		docs[i] = d
	}
	for i, d := range docs {
		if p, _ := scenario.ParsePart(d.Settings.Part); p.N != len(dirs) {
			return cfg, nil, fmt.Errorf("%s is part %s, but %d folder(s) given: give every part's folder once", dirs[i], d.Settings.Part, len(dirs))
		}
	}
	// In part order: PartsRow.Parts[i] is part i+1's.
	order := make([]int, len(dirs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		pa, _ := scenario.ParsePart(docs[a].Settings.Part)
		pb, _ := scenario.ParsePart(docs[b].Settings.Part)
		return pa.I - pb.I
	})
	// The flags the parts were given: those whose value is not the
	// default (some flags refuse to be given with --targets).
	defaults, err := parseFlags(nil, io.Discard)
	if err != nil {
		return cfg, nil, err
	}
	args := []string{"--targets", targets, "--admin-token", token, "--out", out}
	for _, name := range slices.Sorted(maps.Keys(sharedFlags(docs[0].Flags))) {
		if v := docs[0].Flags[name]; v != defaults.flags[name] && name != "targets" && name != "admin-token" {
			args = append(args, "--"+name+"="+v)
		}
	}
	if cfg, err = parseFlags(args, io.Discard); err != nil {
		return cfg, nil, fmt.Errorf("the parts' flags: %w", err)
	}
	var rows []scenario.PartsRow
	for _, m := range docs[0].Strategies {
		row, err := readRow(dirs, docs, order, m.Strategy)
		if err != nil {
			return cfg, nil, err
		}
		rows = append(rows, row)
	}
	return cfg, rows, nil
}

// readRow reads row strategy of every part, in order: its results, which
// must be as many as the part says it sent, and its span, which must
// overlap the others' (scenario.Apart).
func readRow(dirs []string, docs []report.Document, order []int, strategy string) (scenario.PartsRow, error) {
	row := scenario.PartsRow{Strategy: scenario.Strategy(strategy)}
	var spans []scenario.Span
	for _, i := range order {
		d := docs[i]
		if len(d.Strategies) != len(docs[0].Strategies) {
			return row, fmt.Errorf("%s has %d rows, %s %d: a part did not finish", dirs[i], len(d.Strategies), dirs[0], len(docs[0].Strategies))
		}
		k := slices.IndexFunc(d.Strategies, func(x report.StrategyDoc) bool { return x.Strategy == strategy })
		if k < 0 {
			return row, fmt.Errorf("%s has no row %s", dirs[i], strategy)
		}
		md := d.Strategies[k]
		rs, err := report.ReadRaw(filepath.Join(dirs[i], report.RawFile(strategy)))
		if err != nil {
			return row, err
		}
		if len(rs) != md.Sent {
			// A results file still being written, or cut short: its
			// sums and samples would be short with no word said.
			return row, fmt.Errorf("%s: %d results for row %s, whose report says %d sent: a part still writing, or a file cut short",
				dirs[i], len(rs), strategy, md.Sent)
		}
		if md.Span == nil {
			return row, fmt.Errorf("%s: row %s has no span (an older loadgen): run the parts again", dirs[i], strategy)
		}
		row.Parts = append(row.Parts, scenario.PartRow{Sent: md.Sent, Results: rs, Span: md.Span.Span()})
		spans = append(spans, md.Span.Span())
	}
	if later, earlier, gap, ok := scenario.Apart(spans); ok {
		// One crowd's parts run together. Apart ones are two sales on one
		// product, summed as one: two runs that share a --run-id, or a
		// part run again after the others.
		return row, fmt.Errorf("%s began row %s %.1fs after %s had ended it, by their clocks: the parts did not run together, so they are not one crowd (two runs that share a --run-id, or a part run again?); run the crowd again, every part started together, with a new --run-id",
			dirs[order[later]], strategy, gap.Seconds(), dirs[order[earlier]])
	}
	return row, nil
}

// sharedFlags is flags without those the parts may differ in.
func sharedFlags(flags map[string]string) map[string]string {
	out := maps.Clone(flags)
	for _, name := range mergeIgnored {
		delete(out, name)
	}
	return out
}

// mergeParts audits the parts' rows on the fleet once (scenario.Merge),
// prints the table and writes the report, as a run of one generator
// does.
func mergeParts(ctx context.Context, cfg config, parts int, rows []scenario.PartsRow, stdout io.Writer) error {
	began := time.Now()
	dir := report.Dir(cfg.out, began)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := fleet.ExternalFleet(cfg.targets, cfg.adminToken, cfg.redis)
	title := fmt.Sprintf("%s, merged from %d generators' parts", runTitle(cfg, len(f.Targets), f.Backend), parts)
	fmt.Fprintf(stdout, "%s\n", strings.Join(report.Wrap(title, report.TerminalWidth), "\n"))
	out, err := scenario.Merge(ctx, cfg.settings, f, cfg.runID, parts, rows)
	return finish(stdout, cfg, dir, began, out, err)
}
