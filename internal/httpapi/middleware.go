package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// requestIDHeader carries the request id in and out. A caller (a load
// balancer, the load generator) may set it; otherwise the shop makes one.
const requestIDHeader = "X-Request-ID"

type requestIDKey struct{}

// RequestID returns the request id that the router's middleware stored in
// ctx, or "" outside a request. Code below the handlers (the order service)
// may use it to tag its own log lines.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestLog gives every request an id (the caller's X-Request-ID if it is
// a sane token, a fresh one otherwise), echoes it in the response, puts it
// in the request's context, and logs one line per request when it is done.
func requestLog(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		id := c.GetHeader(requestIDHeader)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		c.Header(requestIDHeader, id)
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestIDKey{}, id))

		c.Next()

		status := c.Writer.Status()
		level := logLevelFor(status)
		if !logger.Enabled(c.Request.Context(), level) {
			return // a crowd's access log costs nothing where nobody reads it
		}
		attrs := []slog.Attr{
			slog.String("request_id", id),
			slog.String("method", c.Request.Method),
			slog.String("path", c.Request.URL.Path),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
			slog.String("client", c.ClientIP()),
		}
		if len(c.Errors) > 0 {
			attrs = append(attrs, slog.String("error", strings.Join(c.Errors.Errors(), "; ")))
		}
		logger.LogAttrs(c.Request.Context(), level, "request", attrs...)
	}
}

// saneRequestID accepts a caller's id only if it is short and printable, so
// that a header cannot forge log lines.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// newRequestID returns 16 random hex characters.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// recovery turns a panicking handler into a logged 500 with the usual JSON
// error body instead of a dropped connection. http.ErrAbortHandler is
// re-raised: it is net/http's way to abort a response on purpose.
func recovery(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			logger.ErrorContext(c.Request.Context(), "panic in handler",
				slog.String("request_id", RequestID(c.Request.Context())),
				slog.Any("panic", v), slog.String("path", c.Request.URL.Path),
				slog.String("stack", string(debug.Stack())))
			if c.Writer.Written() {
				return // too late for a clean error body
			}
			writeError(c, fmt.Errorf("panic: %v", v))
		}()
		c.Next()
	}
}
