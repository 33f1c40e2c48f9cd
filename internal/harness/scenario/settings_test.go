package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
)

func TestDefaultSettingsAreValid(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("DefaultSettings().Validate() = %v, want nil", err)
	}
}

func TestValidateRejectsNonsense(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Settings)
		want   string
	}{
		{"negative users", func(s *Settings) { s.Users = -5 }, "users: -5"},
		{"zero rate", func(s *Settings) { s.Rate = 0 }, "rate: 0"},
		{"unknown strategy", func(s *Settings) { s.Strategies = []Strategy{"paxos"} }, `unknown strategy "paxos"`},
		{"no strategies", func(s *Settings) { s.Strategies = nil }, "strategies: need at least one"},
		{"strategy twice", func(s *Settings) { s.Strategies = []Strategy{"lua", "lua"} }, `"lua" listed twice`},
		{"zero stock", func(s *Settings) { s.Stock = 0 }, "stock: 0"},
		{"zero clicks", func(s *Settings) { s.Clicks = 0 }, "clicks: 0"},
		{"zero duration", func(s *Settings) { s.Duration = 0 }, "duration: 0s"},
		{"tiny ttl", func(s *Settings) { s.LockTTL = time.Millisecond }, "lock-ttl: 1ms, want 10ms..1m0s"},
		{"sub-millisecond work", func(s *Settings) { s.Work = 1500 * time.Microsecond }, "work: 1.5ms, want whole milliseconds"},
		{"negative stall", func(s *Settings) { s.Stall = -time.Second }, "stall: -1s"},
		{"stall rate above 1", func(s *Settings) { s.StallRate = 1.5 }, "stall-rate: 1.5"},
		{"kill six nodes", func(s *Settings) { s.Faults = []fault.Fault{fault.RedlockKill(6)} }, "redlock-kill: 6"},
		{"restart without redlock or fenced", func(s *Settings) {
			s.Strategies, s.Faults = []Strategy{"lua"}, []fault.Fault{&fault.EmptyRestart{Nodes: 3}}
		},
			"redis-restart: needs redlock or fenced"},
		{"two faults on one row", func(s *Settings) { s.Faults = []fault.Fault{&fault.EmptyRestart{Nodes: 3}, fault.RedlockKill(2)} },
			"redis-restart: not with --redlock-kill: both strike the redlock row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			tc.change(&s)
			err := s.Validate()
			if !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalidSettings", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	s := DefaultSettings()
	s.Users, s.Rate = -1, 0
	got := s.Problems()
	if len(got) != 2 {
		t.Fatalf("Problems() = %q, want 2 problems", got)
	}
}
