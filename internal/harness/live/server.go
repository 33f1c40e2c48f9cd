package live

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/flashsale/flashsale/internal/harness/webfont"
)

//go:embed page.html
var pageSource []byte

// page is page.html with the title's 双 in its style (webfont.FaceCSS in
// place of the comment that names it).
var page = bytes.Replace(pageSource, []byte("/* webfont.FaceCSS: the page's own 双, for a machine without a CJK font */"),
	[]byte(webfont.FaceCSS), 1)

// Handler serves b's page: GET / the page, GET /events the state as
// server-sent events (one whole State per event, at most ten a second,
// the last when the run is done), GET /state the state as JSON.
func (b *Board) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(page)
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		data, _, _, _ := b.snapshot()
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	})
	mux.HandleFunc("GET /events", b.events)
	return mux
}

// minGap spaces the events one page receives: a projector needs no more.
const minGap = 100 * time.Millisecond

// events streams the state to one page until the run is done or the page
// goes away.
func (b *Board) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	sent, first := uint64(0), true
	for {
		data, version, done, changed := b.snapshot()
		if first || version != sent {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
				return
			}
			flusher.Flush()
			sent, first = version, false
		}
		if done { // the state just sent was the last
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(minGap):
		}
	}
}

// Server is a running live page.
type Server struct {
	URL string // http://host:port/
	srv *http.Server
	end chan error
}

// Serve starts serving b on addr (host:port; port 0 picks a free one). It
// returns at once; Close stops it.
func Serve(b *Board, addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/", end: make(chan error, 1),
		srv: &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 5 * time.Second}}
	go func() { s.end <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, giving the pages up to a second to receive the
// last event.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	if serr := <-s.end; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
