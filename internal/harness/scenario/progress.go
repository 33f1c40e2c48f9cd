package scenario

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/flashsale/flashsale/internal/harness/tally"
)

// progress prints the live line of one attack: strategy, elapsed time,
// requests sent, answers by class. On a terminal it redraws one line with
// \r several times a second; elsewhere (a pipe, a CI log) it prints a plain
// line each second. A nil *progress prints nothing. Not safe for concurrent
// use: the goroutine reading the results owns it.
type progress struct {
	w        io.Writer
	tty      bool
	strategy string
	start    time.Time
	last     time.Time
	width    int
}

// IsTerminal reports whether w is a terminal (a character device), which is
// when the progress line is redrawn in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, tty bool, strategy string) *progress {
	if w == nil {
		return nil
	}
	now := time.Now()
	return &progress{w: w, tty: tty, strategy: strategy, start: now, last: now}
}

// every is how often the line is printed.
func (p *progress) every() time.Duration {
	if p.tty {
		return 100 * time.Millisecond
	}
	return time.Second
}

// update prints the line if it is due.
func (p *progress) update(sent int, t *tally.Answers) {
	if p == nil || time.Since(p.last) < p.every() {
		return
	}
	p.last = time.Now()
	p.print(sent, t, false)
}

// done prints the final line of the attack and ends it.
func (p *progress) done(sent int, t *tally.Answers) {
	if p == nil {
		return
	}
	p.print(sent, t, true)
}

func (p *progress) print(sent int, t *tally.Answers, final bool) {
	c2, c4, c5, other := t.Class()
	line := fmt.Sprintf("%-8s %5.1fs  sent %6d  2xx %5d  4xx %5d  5xx %5d",
		p.strategy, time.Since(p.start).Seconds(), sent, c2, c4, c5)
	if other > 0 {
		line += fmt.Sprintf("  failed %d", other)
	}
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
	if final {
		fmt.Fprintln(p.w)
	}
}
