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
	"github.com/flashsale/flashsale/internal/fleet"
	"github.com/flashsale/flashsale/internal/report"
	"github.com/flashsale/flashsale/internal/scenario"
)

const mergeUsage = `Usage: loadgen merge --targets URL,... --admin-token T PART-DIR...

Puts together the report folders of the generators that each sent a part of
one crowd (loadgen --part i/n, every part's folder given once), once every
part is done, and writes one report of the whole crowd into a new folder
under --out: each row's answers are the parts' summed, its latencies are
those of every part's raw results (results-<mode>.bin) together, never an
average of the parts' percentiles, and its audit (the shop's count, the
queue's drain, the answered orders not written, the events) is read once
from the --targets fleet, with the admin token the parts used. The parts'
other flags are read from their report.json and must agree.

Exit codes as loadgen's: 0 done; 1 the merge or the audit failed; 2 bad
arguments or parts that do not make one crowd; 3 and 99 as --fail-on-unsafe
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
// be 1/n..n/n of one crowd, each once, with the same flags but for
// mergeIgnored.
func readParts(dirs []string, targets, token, out string) (config, []scenario.PartsRow, error) {
	var cfg config
	if len(dirs) == 0 {
		return cfg, nil, errors.New("no part folders given")
	}
	docs := make([]report.Document, len(dirs))
	seen := map[string]string{}
	for i, dir := range dirs {
		d, err := readReportFile(dir)
		if err != nil {
			return cfg, nil, err
		}
		part := d.Settings.Part
		p, err := scenario.ParsePart(part)
		if err != nil {
			return cfg, nil, fmt.Errorf("%s: not a part of a crowd (loadgen --part i/n)", dir)
		}
		if p.N != len(dirs) {
			return cfg, nil, fmt.Errorf("%s is part %s, but %d folder(s) given: give every part's folder once", dir, part, len(dirs))
		}
		if other, ok := seen[part]; ok {
			return cfg, nil, fmt.Errorf("%s and %s are both part %s", other, dir, part)
		}
		seen[part] = dir
		if i > 0 && !maps.Equal(sharedFlags(d.Flags), sharedFlags(docs[0].Flags)) {
			return cfg, nil, fmt.Errorf("%s and %s differ in flags other than %s: not parts of one crowd", dirs[0], dir, strings.Join(mergeIgnored, ", "))
		}
		docs[i] = d
	}
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
	for _, m := range docs[0].Modes {
		row := scenario.PartsRow{Mode: scenario.Mode(m.Mode)}
		for i, d := range docs {
			if len(d.Modes) != len(docs[0].Modes) {
				return cfg, nil, fmt.Errorf("%s has %d rows, %s %d: a part did not finish", dirs[i], len(d.Modes), dirs[0], len(docs[0].Modes))
			}
			rs, err := report.ReadRaw(filepath.Join(dirs[i], report.RawFile(m.Mode)))
			if err != nil {
				return cfg, nil, err
			}
			k := slices.IndexFunc(d.Modes, func(x report.ModeDoc) bool { return x.Mode == m.Mode })
			if k < 0 {
				return cfg, nil, fmt.Errorf("%s has no row %s", dirs[i], m.Mode)
			}
			if sent := d.Modes[k].Sent; len(rs) != sent {
				// A results file still being written, or cut short: its
				// sums and samples would be short with no word said.
				return cfg, nil, fmt.Errorf("%s: %d results for row %s, whose report says %d sent: a part still writing, or a file cut short",
					dirs[i], len(rs), m.Mode, sent)
			}
			row.Results = append(row.Results, rs...)
			row.Sent += d.Modes[k].Sent
		}
		rows = append(rows, row)
	}
	return cfg, rows, nil
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
