package tally

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// The sale's commands are counted; the cmdMeter's own INFO and the clients'
// connection and slot-map bookkeeping are not.
func TestCommandCalls(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_evalsha:calls=868,usec=45623,usec_per_call=52.56,rejected_calls=0,failed_calls=5\r\n" +
		"cmdstat_get:calls=12,usec=10,usec_per_call=1.00\r\n" +
		"cmdstat_info:calls=40,usec=10,usec_per_call=1.00\r\n" +
		"cmdstat_cluster|slots:calls=9,usec=10,usec_per_call=1.00\r\n" +
		"cmdstat_client|setinfo:calls=9,usec=10,usec_per_call=1.00\r\n" +
		"cmdstat_hello:calls=3,usec=10,usec_per_call=1.00\r\n"
	if got := CommandCalls(info); got != 880 {
		t.Errorf("CommandCalls = %d, want 880 (evalsha and get)", got)
	}
}

// Each master's part is its own difference; a master that came back
// empty, or appeared, counts from zero.
func TestLoadBetween(t *testing.T) {
	got := LoadBetween(map[string]int64{"a:1": 100, "b:1": 50, "c:1": 900},
		map[string]int64{"a:1": 400, "b:1": 150, "c:1": 100, "d:1": 0})
	want := []MasterLoad{{"a:1", 300, 0.6}, {"b:1", 100, 0.2}, {"c:1", 100, 0.2}, {"d:1", 0, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadBetween = %+v, want %+v", got, want)
	}
}

type cmdMeter struct {
	reads []map[string]int64
	err   error
}

func (m *cmdMeter) Commands(context.Context) (map[string]int64, error) {
	r := m.reads[0]
	m.reads = m.reads[1:]
	return r, m.err
}
func (m *cmdMeter) Describe() string { return "test" }

// No cmdMeter, or a read that failed, gives no load at all.
func TestCommandsSince(t *testing.T) {
	ctx := context.Background()
	if got := CommandsSince(ctx, nil)(ctx); got != nil {
		t.Errorf("nil cmdMeter: %+v", got)
	}
	m := &cmdMeter{reads: []map[string]int64{{"a": 1}, {"a": 5}}}
	if got := CommandsSince(ctx, m)(ctx); len(got) != 1 || got[0].Commands != 4 {
		t.Errorf("load %+v, want 4 on a", got)
	}
	m = &cmdMeter{reads: []map[string]int64{{"a": 1}, {"a": 5}}, err: errors.New("down")}
	if got := CommandsSince(ctx, m)(ctx); got != nil {
		t.Errorf("failed read: %+v, want nil", got)
	}
}
