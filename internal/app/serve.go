package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve serves the shop's API on ln until ctx ends, then shuts down
// gracefully: it stops accepting connections, lets in-flight requests (an
// order inside its critical section) finish and release their locks, and
// returns. It closes ln but not the shop: call Close afterwards.
//
// Requests do not inherit ctx's cancellation (only its values), so ending
// ctx never cuts an order short. If they have not finished within
// Config.ShutdownTimeout, Serve closes their connections, which cancels
// their contexts, waits briefly for them to release their locks, and
// returns an error wrapping context.DeadlineExceeded.
//
// Serve returns nil after a graceful shutdown and an error if ln fails. It
// must be called at most once per Shop.
func (s *Shop) Serve(ctx context.Context, ln net.Listener) error {
	log := s.cfg.logger()
	srv := &http.Server{
		Handler:           s.track(s.handler),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      s.writeTimeout(),
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("shop: serving", "addr", ln.Addr().String())

	select {
	case err := <-errc:
		return fmt.Errorf("app: serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	timeout := s.cfg.shutdownTimeout()
	log.Info("shop: shutting down, letting in-flight requests finish", "timeout", timeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if err != nil {
		log.Warn("shop: in-flight requests outlasted the shutdown timeout; closing their connections", "timeout", timeout)
		srv.Close()
		err = fmt.Errorf("app: graceful shutdown: %w", err)
	}
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if !s.drain(drainTimeout) {
		log.Warn("shop: handlers still running after close", "waited", drainTimeout)
	}
	if err == nil {
		log.Info("shop: stopped")
	}
	return err
}

// track counts the requests inside the handler so that Serve can wait for
// handlers that a forced close cut off (Shutdown already waits for the
// others).
func (s *Shop) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		next.ServeHTTP(w, r)
	})
}

// drain waits up to d for tracked handlers to return.
func (s *Shop) drain(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
