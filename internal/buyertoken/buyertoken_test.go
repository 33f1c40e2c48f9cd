package buyertoken_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/buyertoken"
)

var (
	secret = []byte("0123456789abcdef-test-secret")
	now    = time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
)

func TestVerifyAcceptsItsOwnToken(t *testing.T) {
	for _, buyer := range []string{"alice", "Alice", "buyer-00042", "a.b:c-d_e", "x|y"} {
		t.Run(buyer, func(t *testing.T) {
			tok := buyertoken.Sign(secret, buyer, now.Add(time.Minute))
			got, err := buyertoken.Verify(secret, tok, now)
			if err != nil || got != buyer {
				t.Fatalf("Verify = %q, %v; want %q, nil", got, err, buyer)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	good := buyertoken.Sign(secret, "alice", now.Add(time.Minute))
	payload, sig, _ := strings.Cut(good, ".")
	enc := base64.RawURLEncoding
	reencoded := func(p string) string { return enc.EncodeToString([]byte(p)) + "." + sig }
	flipped := []byte(sig)
	flipped[0] ^= 'A' ^ 'B'

	cases := []struct {
		name  string
		token string
		now   time.Time
		want  error
	}{
		{"other secret", buyertoken.Sign([]byte("another secret, sixteen+"), "alice", now.Add(time.Minute)), now, buyertoken.ErrForged},
		{"changed signature", payload + "." + string(flipped), now, buyertoken.ErrForged},
		{"changed buyer", reencoded("bob|" + strings.Split(decoded(t, payload), "|")[1]), now, buyertoken.ErrForged},
		{"changed expiry", reencoded("alice|99999999999"), now, buyertoken.ErrForged},
		{"no signature", payload + ".", now, buyertoken.ErrForged},
		{"expired", buyertoken.Sign(secret, "alice", now.Add(-time.Second)), now, buyertoken.ErrExpired},
		{"expires now", buyertoken.Sign(secret, "alice", now), now, buyertoken.ErrExpired},
		{"valid until expiry", good, now.Add(time.Minute - time.Second), nil},
		{"empty", "", now, buyertoken.ErrMalformed},
		{"no dot", payload, now, buyertoken.ErrMalformed},
		{"not base64", "!!!.???", now, buyertoken.ErrMalformed},
		{"another spelling of the signature", payload + "." + respelt(t, sig), now, buyertoken.ErrMalformed},
		{"too long", strings.Repeat("a", buyertoken.MaxLen) + "." + sig, now, buyertoken.ErrMalformed},
		{"signed payload without expiry", signedRaw(t, "alice"), now, buyertoken.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buyer, err := buyertoken.Verify(secret, c.token, c.now)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("Verify = %q, %v; want error %v", buyer, err, c.want)
			}
			if c.want != nil && buyer != "" {
				t.Errorf("buyer = %q on refusal; want \"\"", buyer)
			}
		})
	}
}

func TestMalformedIsForged(t *testing.T) {
	if !errors.Is(buyertoken.ErrMalformed, buyertoken.ErrForged) {
		t.Fatal("ErrMalformed does not wrap ErrForged")
	}
	if errors.Is(buyertoken.ErrExpired, buyertoken.ErrForged) {
		t.Fatal("ErrExpired wraps ErrForged; an expired token is genuine")
	}
}

func TestVerifyWithoutSecret(t *testing.T) {
	tok := buyertoken.Sign(secret, "alice", now.Add(time.Minute))
	if _, err := buyertoken.Verify(nil, tok, now); !errors.Is(err, buyertoken.ErrNoSecret) {
		t.Fatalf("Verify(nil secret) = %v; want ErrNoSecret", err)
	}
}

func TestSignPanicsWithoutSecret(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Sign with an empty secret did not panic")
		}
	}()
	buyertoken.Sign(nil, "alice", now)
}

func decoded(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signedRaw is a correctly signed token whose payload is raw, not
// buyer|expiry: the signature alone must not make a payload valid.
func signedRaw(t *testing.T, raw string) string {
	t.Helper()
	return buyertoken.SignRaw(secret, raw)
}

// respelt is sig with its last character's unused low bits set: the same
// bytes to a lenient decoder, not a token Sign writes.
func respelt(t *testing.T, sig string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(sig)%4 != 3 { // 32 bytes: 43 characters, the last with 2 unused bits
		t.Fatalf("signature of %d characters", len(sig))
	}
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	return sig[:len(sig)-1] + string(alphabet[last|3])
}
