package main

import (
	"flag"
	"fmt"
	"regexp"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// partFlags are a crowd sent by several generators: this one's part, and
// the run's name that the parts share.
type partFlags struct {
	runID string // --run-id: names the products; empty: the start time
}

// addPartFlags registers --part and --run-id on fs.
func addPartFlags(fs *flag.FlagSet, c *config) {
	fs.Var(&partFlag{p: &c.settings.Part}, "part", "i/n: send only part i of n of the crowd (1/1: the whole crowd, as no --part), for a crowd bigger than one generator sends: the buyers whose number is i-1 mod n, at 1/n of --rate, against the --targets fleet every part shares; give every part the same flags but --part and --out; part 1 creates each row's product, the others wait up to "+scenario.PartWait.String()+" for it; no part audits: 'loadgen merge' puts the parts' report folders together and audits the fleet once (default none: the whole crowd)")
	fs.StringVar(&c.runID, "run-id", "", "name this run's products d11-<run-id>-<strategy>; with --part, required and the same in every part, and new on the fleet's database (default none: the start time)")
}

// runIDPattern is what a --run-id may hold: it goes into product ids and
// URLs.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,40}$`)

// checkPart validates --part and --run-id.
func (c *config) checkPart() []string {
	var bad []string
	if c.runID != "" && !runIDPattern.MatchString(c.runID) {
		bad = append(bad, fmt.Sprintf("run-id: %q, want 1 to 40 letters, digits, '.', '_' or '-'", c.runID))
	}
	if c.settings.Part.Whole() {
		return bad
	}
	if len(c.targets) == 0 {
		bad = append(bad, "part: only with --targets: the parts attack one fleet, and each embedded fleet would be another")
	}
	if c.runID == "" {
		bad = append(bad, "part: needs --run-id, the same in every part, to name the products they share")
	}
	if len(c.sweep) > 0 || c.settings.Runs() > 1 || len(c.settings.Faults) > 0 {
		bad = append(bad, "part: not with --sweep, --count or a fault: a part sends its share of one crowd per row, and loadgen merge audits each row once")
	}
	return bad
}

// partFlag is --part: i/n.
type partFlag struct{ p *scenario.Part }

func (f *partFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

// Set parses v; 1/1 is the whole crowd, the zero Part, so that --part 1/1
// runs and records exactly what no --part does.
func (f *partFlag) Set(v string) error {
	p, err := scenario.ParsePart(v)
	if err != nil {
		return err
	}
	if p.Whole() {
		p = scenario.Part{}
	}
	*f.p = p
	return nil
}
