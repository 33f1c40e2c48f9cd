// Package report writes what a scenario run measured: the table on the
// terminal, and a report folder with report.json (every figure, for
// scripts and checks), report.md (the table, ready for a README),
// report.html (one self-contained page with inline SVG charts, no network
// needed to view it) and Vegeta's raw results per strategy (results-<strategy>.bin,
// gob, for `vegeta report` and `vegeta plot`).
//
// The writers only read the scenario.Outcome; they are safe for concurrent
// use on the same outcome.
package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// Names of the files Write creates in the report folder.
const (
	JSONFile     = "report.json"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// RawFile names the file holding one strategy's raw Vegeta results.
func RawFile(strategy string) string { return "results-" + strategy + ".bin" }

// Dir is the report folder of a run that started at t under base
// (base/20060102-150405). It does not create it.
func Dir(base string, t time.Time) string {
	return filepath.Join(base, t.Format("20060102-150405"))
}

// Write writes every report file of o into dir, creating dir if needed. It
// writes as many files as it can and returns the errors of those it could
// not.
func Write(dir string, o *scenario.Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var errs []error
	for name, write := range map[string]func(io.Writer, *scenario.Outcome) error{
		JSONFile:     writeJSON,
		MarkdownFile: writeMarkdown,
		HTMLFile:     writeHTML,
	} {
		errs = append(errs, writeFile(filepath.Join(dir, name), o, write))
	}
	for _, m := range o.Strategies {
		errs = append(errs, writeRaw(filepath.Join(dir, RawFile(string(m.Strategy))), m))
	}
	return errors.Join(errs...)
}

// writeFile creates path and fills it with write.
func writeFile(path string, o *scenario.Outcome, write func(io.Writer, *scenario.Outcome) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := write(f, o); err != nil {
		f.Close()
		return fmt.Errorf("report: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
