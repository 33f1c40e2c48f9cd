package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gin-gonic/gin"
)

// adminOnly guards the admin routes with a shared bearer token.
//
// With no token configured the routes are closed (403) and the message says
// how to open them. A missing or wrong token is a 401 with a
// WWW-Authenticate challenge. The comparison runs in constant time over
// SHA-256 digests, so neither the content nor the length of the configured
// token leaks through response timing (subtle.ConstantTimeCompare alone
// returns early when the lengths differ).
func adminOnly(token string) gin.HandlerFunc {
	want := sha256.Sum256([]byte(token))
	return func(c *gin.Context) {
		if token == "" {
			writeError(c, &requestError{kind: errForbidden,
				msg: "admin routes are disabled: start the shop with --admin-token or SHOP_ADMIN_TOKEN set"})
			return
		}
		got, ok := bearerToken(c.GetHeader("Authorization"))
		if !ok {
			c.Header("WWW-Authenticate", `Bearer realm="flashsale admin"`)
			writeError(c, &requestError{kind: errUnauthorized,
				msg: "admin route: send Authorization: Bearer <admin token>"})
			return
		}
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			c.Header("WWW-Authenticate", `Bearer realm="flashsale admin", error="invalid_token"`)
			writeError(c, &requestError{kind: errUnauthorized, msg: "admin route: wrong admin token"})
			return
		}
		c.Next()
	}
}

// bearerToken extracts the token from an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive (RFC 9110).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
