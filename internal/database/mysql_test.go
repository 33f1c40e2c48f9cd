package database_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/database"
	"github.com/flashsale/flashsale/internal/porthold"
)

func TestMySQLConfig(t *testing.T) {
	tests := []struct {
		name        string
		dsn         string
		interpolate bool
		timeout     time.Duration
	}{
		{"adds interpolateParams", "root@tcp(127.0.0.1:3306)/shop", true, 5 * time.Second},
		{"keeps interpolateParams=false", "root@tcp(127.0.0.1:3306)/shop?interpolateParams=false", false, 5 * time.Second},
		{"keeps timeout", "root@tcp(127.0.0.1:3306)/shop?timeout=2s", true, 2 * time.Second},
		{"forces parseTime", "root:pw@tcp(db:3306)/shop?parseTime=false", true, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := database.MySQLConfig(tt.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.ParseTime {
				t.Errorf("ParseTime: got false, want true")
			}
			if got, want := cfg.InterpolateParams, tt.interpolate; got != want {
				t.Errorf("InterpolateParams: got %v, want %v", got, want)
			}
			if got, want := cfg.Timeout, tt.timeout; got != want {
				t.Errorf("Timeout: got %v, want %v", got, want)
			}
		})
	}
}

func TestMySQLConfigInvalid(t *testing.T) {
	for _, dsn := range []string{
		"",
		"root@tcp(127.0.0.1:3306)/",      // no database
		"root@tcp(127.0.0.1:3306)shop",   // no slash
		"root:secret@tcp(127.0.0.1:3306", // unbalanced
	} {
		_, err := database.MySQLConfig(dsn)
		if !errors.Is(err, database.ErrInvalidDSN) {
			t.Errorf("MySQLConfig(%q): got %v, want ErrInvalidDSN", dsn, err)
		}
		if err != nil && containsSecret(err.Error()) {
			t.Errorf("MySQLConfig(%q): error %q shows the password", dsn, err)
		}
	}
}

func containsSecret(s string) bool { return strings.Contains(s, "secret") }

func TestOpenMySQLUnavailable(t *testing.T) {
	// A port that just closed: connection refused.
	free, err := porthold.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", free[0])

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = database.OpenMySQL(ctx, "root:secret@tcp("+addr+")/shop")
	if !errors.Is(err, database.ErrUnavailable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
	if containsSecret(err.Error()) {
		t.Errorf("error %q shows the password", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("failed after %v, want fast", took)
	}
}

// WithAddr sends the connection to the address it returns, and the error
// still names the DSN's server, without its password.
func TestOpenMySQLWithAddrDialsThere(t *testing.T) {
	there, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer there.Close()
	dialled := make(chan struct{}, 1)
	go func() {
		for {
			c, err := there.Accept()
			if err != nil {
				return
			}
			select {
			case dialled <- struct{}{}:
			default:
			}
			c.Close() // no handshake: the open fails after the dial
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var asked string
	_, err = database.OpenMySQL(ctx, "root:secret@tcp(127.0.0.1:1)/shop", database.WithAddr(func(a string) (string, error) {
		asked = a
		return there.Addr().String(), nil
	}))
	if !errors.Is(err, database.ErrUnavailable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
	select {
	case <-dialled:
	default:
		t.Errorf("nothing dialled the address WithAddr returned")
	}
	if asked != "127.0.0.1:1" {
		t.Errorf("WithAddr was asked for %q, want the DSN's 127.0.0.1:1", asked)
	}
	if msg := err.Error(); !strings.Contains(msg, "127.0.0.1:1/") || containsSecret(msg) {
		t.Errorf("error %q: want it to name 127.0.0.1:1 and no password", msg)
	}
}
