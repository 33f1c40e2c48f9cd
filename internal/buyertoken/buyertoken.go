// Package buyertoken owns the buyer's signed token: proof that a request
// acts for one buyer, until a time. The shops that share a secret accept
// each other's tokens; whoever holds the secret (a login service, the load
// generator) mints them.
//
// A token is two base64url parts joined by a dot:
//
//	base64url(buyer "|" expiry) "." base64url(HMAC-SHA256(secret, label || buyer "|" expiry))
//
// where expiry is Unix seconds and label is a fixed string, so that a MAC
// made with the same secret for another purpose is never a valid token.
//
// What it promises: without the secret nobody can make a token that
// verifies, nor change the buyer or the expiry of one. What it does not: a
// token is a bearer credential, so anyone who reads one may use it until it
// expires (send it over TLS only), and it cannot be revoked early: keep
// lifetimes short. It carries no secret: its buyer and expiry are readable
// by anyone.
package buyertoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

var (
	// ErrForged means the token was not made with this secret: a wrong
	// signature, a buyer or expiry changed after signing, or not a token
	// at all (ErrMalformed).
	ErrForged = errors.New("buyertoken: forged token")
	// ErrMalformed means the token does not even have a token's shape. It
	// wraps ErrForged: to a verifier the two are the same refusal.
	ErrMalformed = fmt.Errorf("%w: malformed", ErrForged)
	// ErrExpired means the token was made with this secret but its expiry
	// has passed.
	ErrExpired = errors.New("buyertoken: expired token")
	// ErrNoSecret means Verify was given an empty secret, which would
	// make every token forgeable.
	ErrNoSecret = errors.New("buyertoken: no secret")
)

// MinSecretLen is the shortest secret a shop accepts: an HMAC key shorter
// than this could be guessed offline from one token.
const MinSecretLen = 16

// MaxLen bounds what Verify reads: a token for a 64-character buyer id is
// under 150 characters; anything far longer is refused before hashing.
const MaxLen = 512

// label separates this MAC from any other made with the same secret.
const label = "flashsale buyer token v1\n"

// Sign returns a token that names buyerID until expiry (to the second,
// rounded down). It panics if secret is empty: a token signed with no
// secret proves nothing. It is safe for concurrent use.
func Sign(secret []byte, buyerID string, expiry time.Time) string {
	if len(secret) == 0 {
		panic("buyertoken: Sign with an empty secret")
	}
	payload := buyerID + "|" + strconv.FormatInt(expiry.Unix(), 10)
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(mac(secret, payload))
}

// Verify checks token against secret at now and returns the buyer it
// names. The signature is checked first, in constant time, and only then
// is the payload read. Errors: ErrNoSecret for an empty secret; ErrForged
// (or ErrMalformed, which wraps it) for a token this secret did not sign;
// ErrExpired when now is at or past its expiry. It is safe for concurrent
// use.
func Verify(secret []byte, token string, now time.Time) (string, error) {
	if len(secret) == 0 {
		return "", ErrNoSecret
	}
	if len(token) > MaxLen {
		return "", ErrMalformed
	}
	// Strict: one token, one spelling; the unused bits of a last
	// character may not be set.
	enc := base64.RawURLEncoding.Strict()
	p64, s64, ok := strings.Cut(token, ".")
	if !ok {
		return "", ErrMalformed
	}
	payload, err1 := enc.DecodeString(p64)
	sig, err2 := enc.DecodeString(s64)
	if err1 != nil || err2 != nil {
		return "", ErrMalformed
	}
	if !hmac.Equal(sig, mac(secret, string(payload))) {
		return "", ErrForged
	}
	// Signed by us: the payload is ours, but still parsed with care.
	buyer, exp, ok := cutLast(string(payload), "|")
	if !ok {
		return "", ErrMalformed
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", ErrMalformed
	}
	if now.Unix() >= unix {
		return "", ErrExpired
	}
	return buyer, nil
}

// mac is HMAC-SHA256 of label and payload under secret.
func mac(secret []byte, payload string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(label))
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// cutLast cuts s around the last sep: a buyer id may contain any byte, the
// expiry never contains "|".
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
