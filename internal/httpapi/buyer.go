package httpapi

import (
	"errors"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/flashsale/flashsale/internal/buyertoken"
)

// BuyerTokenHeader carries the buyer's signed token (package buyertoken)
// on the routes that act on a buyer's order: placing, paying, cancelling.
// It is not Authorization, which the admin routes use: one request may
// need to say who the buyer is and who the admin is, and neither should
// be mistaken for the other.
const BuyerTokenHeader = "X-Buyer-Token"

// buyerKey is where buyerOnly leaves the request's buyer in the gin
// context, for actFor.
type buyerKey struct{}

// caller is who buyerOnly found: the token's buyer, or, when the shop runs
// without a secret, anyone (open).
type caller struct {
	buyer string
	open  bool
}

// buyerOnly authenticates the buyer on a route that acts on an order: with
// a secret, a missing, forged or expired token is a 401 before the body is
// read, and the token's buyer is left for actFor; without one every
// request passes, as anyone's (the open demo). The handler must then call
// actFor with the order's buyer.
func buyerOnly(secret []byte) gin.HandlerFunc {
	return func(c *gin.Context) {
		if len(secret) == 0 {
			c.Set(buyerKey{}, caller{open: true})
			c.Next()
			return
		}
		tok := c.GetHeader(BuyerTokenHeader)
		if tok == "" {
			c.Header("WWW-Authenticate", `BuyerToken realm="flashsale buyers", header="`+BuyerTokenHeader+`"`)
			writeError(c, &requestError{kind: errUnauthorized,
				msg: "buyer route: send " + BuyerTokenHeader + ": <token>, signed for your user_id with the shops' buyer secret"})
			return
		}
		buyer, err := buyertoken.Verify(secret, tok, time.Now())
		if err != nil {
			c.Header("WWW-Authenticate", `BuyerToken realm="flashsale buyers", error="invalid_token"`)
			writeError(c, &requestError{kind: errUnauthorized, msg: tokenRefusal(err)})
			return
		}
		c.Set(buyerKey{}, caller{buyer: buyer})
		c.Next()
	}
}

// tokenRefusal says why Verify refused a token, in the client's words.
func tokenRefusal(err error) string {
	if errors.Is(err, buyertoken.ErrExpired) {
		return "buyer token expired: get a new one"
	}
	return "buyer token forged or malformed: not signed with this shop's buyer secret"
}

// actFor returns nil if the request may act for buyer, the order's owner:
// the shop runs open, or the token buyerOnly checked names that very buyer.
// Ids compare as bytes, as everywhere (Alice is not alice). Another
// buyer's token is a 403 forbidden. A route that did not run buyerOnly
// gets an internal error, never a pass. Call it before anything is
// written, e.g. in POST /api/v1/orders/:id/pay once the order is read:
//
//	if err := actFor(c, o.UserID); err != nil {
//		writeError(c, err)
//		return
//	}
func actFor(c *gin.Context, buyer string) error {
	v, ok := c.Get(buyerKey{})
	who, isCaller := v.(caller)
	switch {
	case !ok || !isCaller:
		return errors.New("httpapi: route acts for a buyer without buyerOnly")
	case who.open || who.buyer == buyer:
		return nil
	}
	return &requestError{kind: errForbidden,
		msg: "buyer token acts for " + strconv.Quote(who.buyer) + ", not for this order's buyer: only the buyer may act on their order"}
}
