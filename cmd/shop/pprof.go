package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveProfiles serves Go's profiles (package net/http/pprof) on addr, a
// listener of their own, so that the shop's API never exposes them, and
// returns the function that stops serving. The profiles are off unless
// --pprof asks for them: a CPU profile of the shop under load is how one
// learns where an order's time and CPU go.
//
//	go tool pprof -seconds 8 http://127.0.0.1:6060/debug/pprof/profile
func serveProfiles(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof: serve", "err", err)
		}
	}()
	log.Info("pprof: profiles served; try: go tool pprof http://"+ln.Addr().String()+"/debug/pprof/profile", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
