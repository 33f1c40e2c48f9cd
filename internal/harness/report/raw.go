package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// writeRaw writes m's raw results in Vegeta's gob encoding, the format
// `vegeta attack` writes, so that `vegeta report results-lua.bin` and
// `vegeta plot results-*.bin > plot.html` work on them.
func writeRaw(path string, m *scenario.StrategyResult) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := vegeta.NewEncoder(w)
	for i := range m.Results {
		if err := enc.Encode(&m.Results[i]); err != nil {
			f.Close()
			return fmt.Errorf("report: %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return f.Close()
}

// ReadRaw reads back a file written for one strategy's raw results.
func ReadRaw(path string) (vegeta.Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	dec := vegeta.NewDecoder(bufio.NewReader(f))
	var out vegeta.Results
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("report: %s: %w", path, err)
		}
		out = append(out, r)
	}
}
