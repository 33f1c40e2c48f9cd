package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newLogger builds the process logger: text or json on out, at level.
func newLogger(out io.Writer, format, level string) *slog.Logger {
	lvl, _ := parseLevel(level) // validated with the flags
	opts := &slog.HandlerOptions{Level: lvl}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(strings.ToUpper(s)))
	return l, err
}

// redisLogger hands go-redis's internal messages ("failed to dial after 1
// attempts") to slog at debug level: while a node is down they come once per
// buyer, and the access log already shows the resulting 503s.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}
