package dlock_test

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/dlock"
)

func TestParseMode(t *testing.T) {
	for _, m := range dlock.Modes() {
		got, err := dlock.ParseMode(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, nil", m, got, err, m)
		}
	}
	for _, s := range []string{"", "Lua", "redlock ", "mutex"} {
		if _, err := dlock.ParseMode(s); !errors.Is(err, dlock.ErrUnknownMode) {
			t.Errorf("ParseMode(%q) = %v, want ErrUnknownMode", s, err)
		}
	}
}

func TestNew(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	nodes := []*redis.Client{c}
	for _, tc := range []struct {
		mode  dlock.Mode
		nodes []*redis.Client
		want  any
	}{
		{dlock.ModeOff, nil, &dlock.Off{}},
		{dlock.ModeNaive, nodes, &dlock.Naive{}},
		{dlock.ModeLua, nodes, &dlock.Lua{}},
		{dlock.ModeRedlock, nodes, &dlock.Redlock{}},
		{dlock.ModeFenced, nodes, &dlock.Lua{}},
	} {
		l, err := dlock.New(tc.mode, tc.nodes)
		if err != nil {
			t.Errorf("New(%s) = %v", tc.mode, err)
			continue
		}
		if got, want := typeName(l), typeName(tc.want); got != want {
			t.Errorf("New(%s) = %s, want %s", tc.mode, got, want)
		}
		_ = l.Close()
	}
	if _, err := dlock.New("spin", nodes); !errors.Is(err, dlock.ErrUnknownMode) {
		t.Errorf("New(spin) = %v, want ErrUnknownMode", err)
	}
	for _, m := range []dlock.Mode{dlock.ModeNaive, dlock.ModeLua, dlock.ModeRedlock, dlock.ModeFenced} {
		if _, err := dlock.New(m, nil); err == nil {
			t.Errorf("New(%s, no nodes) = nil error, want one", m)
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *dlock.Off:
		return "*Off"
	case *dlock.Naive:
		return "*Naive"
	case *dlock.Lua:
		return "*Lua"
	case *dlock.Redlock:
		return "*Redlock"
	}
	return "unknown"
}
