// Command shop is the flash-sale order service: a Gin API that deducts
// stock in the database inside a per-product Redis lock, with a dedupe lock
// against repeated clicks, in the strategy each product was created with.
//
// With no flags it runs on embedded backends (an SQLite file in a temporary
// directory, five in-process Redis servers), serves on :8080 and logs a
// generated admin token. Run `shop --help` for every flag.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/flashsale/flashsale/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and picks the exit status: 0 for success
// and --help, 2 for a bad flag or environment value, 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	var usage *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "shop: %v\nRun 'shop --help' for the flags.\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "shop: %v\n", err)
		return 1
	}
}

// run is the whole program: parse flags (args, with getenv as fallback),
// open the backends, build the shop, serve until ctx ends, shut down
// gracefully, close everything. Help and logs go to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	opts, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, opts.logFormat, opts.logLevel)
	redis.SetLogger(redisLogger{log: log})

	cfg := opts.config(log)
	if cfg.AdminToken == "" {
		if cfg.MySQLDSN != "" {
			log.Warn("admin routes closed: no --admin-token / SHOP_ADMIN_TOKEN given")
		} else {
			cfg.AdminToken = newToken()
			log.Info("admin token generated for this embedded run; pass it as 'Authorization: Bearer <token>'",
				"admin_token", cfg.AdminToken)
		}
	}
	logBuyerTokens(log, cfg.BuyerSecret)

	if opts.pprof != "" {
		stopProfiles, err := serveProfiles(opts.pprof, log)
		if err != nil {
			return err
		}
		defer stopProfiles()
	}

	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	defer ln.Close() // Serve closes it too; this covers the early returns

	backends, err := app.OpenBackends(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeLogged(log, "backends", backends.Close)

	shop, err := app.NewShop(ctx, cfg, backends)
	if err != nil {
		return err
	}
	defer closeLogged(log, "shop", shop.Close)

	log.Info("shop: ready; try: curl http://"+displayAddr(ln.Addr())+"/readyz",
		"lock_wait", opts.lockWait, "max_in_flight", opts.maxInFlight, "shutdown_timeout", opts.shutdownTimeout)
	return shop.Serve(ctx, ln)
}

// logBuyerTokens says at start-up whether buyers must prove who they are:
// without a secret anyone may order as anyone, which a reader of the log
// should not have to guess.
func logBuyerTokens(log *slog.Logger, secret string) {
	if secret == "" {
		log.Warn("buyer tokens: off (anyone may act for any buyer)", "to_require", "--buyer-secret or SHOP_BUYER_SECRET")
		return
	}
	log.Info("buyer tokens: on (placing an order needs the buyer's own X-Buyer-Token)")
}

// closeLogged runs a deferred Close and logs its error, if any.
func closeLogged(log interface{ Warn(string, ...any) }, what string, close func() error) {
	if err := close(); err != nil {
		log.Warn("close "+what, "err", err)
	}
}

// newToken returns 32 random hex characters.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// displayAddr turns a listener address such as [::]:8080 into something a
// reader can paste into curl: localhost:8080.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		if ok {
			return fmt.Sprintf("localhost:%d", tcp.Port)
		}
		return a.String()
	}
	return tcp.String()
}
