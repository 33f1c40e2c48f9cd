package tally

import (
	"bufio"
	"context"
	"sort"
	"strconv"
	"strings"
)

// Where a row's load landed on a Redis Cluster: each master's count of
// commands served (INFO commandstats) read before and after the row, and
// each master's share of the difference. Every product's keys carry its
// hash tag, so all of one product's commands go to the master of its
// slot: a catalogue spreads over the masters, and one hot product does not.

// CommandMeter reads how many commands each Redis master has served so
// far, by address. Implementations must be safe for concurrent use.
type CommandMeter interface {
	Commands(ctx context.Context) (map[string]int64, error)
	// Describe says which servers it reads, for the report.
	Describe() string
}

// MasterFinder says which master serves a product's keys. A CommandMeter
// may implement it. Implementations must be safe for concurrent use.
type MasterFinder interface {
	MasterOf(ctx context.Context, product string) (addr string, err error)
}

// MasterLoad is one master's part of a row's commands.
type MasterLoad struct {
	Addr     string  `json:"addr"`
	Commands int64   `json:"commands"`
	Share    float64 `json:"share"` // of the row's commands on every master, 0..1
}

// CommandsSince reads m now, and returns a function that reads it again
// and gives each master's commands in between, by address, with its
// share. A failed read, or a nil m, gives nil. A master only in the second
// read (a replica promoted meanwhile) counts from zero.
func CommandsSince(ctx context.Context, m CommandMeter) (stop func(ctx context.Context) []MasterLoad) {
	if m == nil {
		return func(context.Context) []MasterLoad { return nil }
	}
	before, err := m.Commands(ctx)
	return func(ctx context.Context) []MasterLoad {
		after, err2 := m.Commands(ctx)
		if err != nil || err2 != nil {
			return nil
		}
		return LoadBetween(before, after)
	}
}

// LoadBetween is each master's commands from before to after, sorted by
// address, with its share of their total; a count that went down (a
// restarted master) counts from zero.
func LoadBetween(before, after map[string]int64) []MasterLoad {
	out := make([]MasterLoad, 0, len(after))
	var total int64
	for addr, n := range after {
		d := n - before[addr]
		if d < 0 {
			d = n
		}
		out = append(out, MasterLoad{Addr: addr, Commands: d})
		total += d
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	for i := range out {
		if total > 0 {
			out[i].Share = float64(out[i].Commands) / float64(total)
		}
	}
	return out
}

// bookkeeping are the commands CommandCalls leaves out: the meter's own
// INFO, and what clients send to set up a connection and read the slot
// map, not the sale's load.
var bookkeeping = map[string]bool{"info": true, "cluster": true, "hello": true, "command": true,
	"readonly": true, "role": true, "ping": true, "client": true}

// CommandCalls sums the calls in INFO commandstats' answer over every
// command but the bookkeeping ones (a subcommand, "cluster|slots", counts
// as its command).
func CommandCalls(info string) int64 {
	var total int64
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		// cmdstat_get:calls=21,usec=175,usec_per_call=8.33,...
		line, ok := strings.CutPrefix(sc.Text(), "cmdstat_")
		name, stats, ok2 := strings.Cut(line, ":")
		cmd, _, _ := strings.Cut(name, "|")
		if !ok || !ok2 || bookkeeping[cmd] {
			continue
		}
		for _, kv := range strings.Split(stats, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
		}
	}
	return total
}
