package scenario

import (
	"net/http"
	"time"

	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/httpapi"
)

// tokenSlack is how long a click's token outlives the attack it was
// signed for: the longest the shops' clocks may run ahead of ours.
const tokenSlack = 5 * time.Minute

// clickTokens signs the crowd's clicks, when the shops require buyer
// tokens: each buyer's clicks carry their own X-Buyer-Token, signed with
// the fleet's secret. The zero value signs nothing: the clicks go without
// a token, as to shops that run open.
type clickTokens struct {
	secret []byte
	expiry time.Time
}

// newClickTokens signs with secret ("": nothing), each token good from now
// until every click of an attack of s has had its answer.
func newClickTokens(secret string, s Settings, now time.Time) clickTokens {
	if secret == "" {
		return clickTokens{}
	}
	return clickTokens{secret: []byte(secret), expiry: now.Add(s.Duration + s.Timeout + tokenSlack)}
}

// headers returns the headers of a click by user: base itself without a
// secret (shared by every click, read-only), else a copy with user's
// token.
func (t clickTokens) headers(base http.Header, user string) http.Header {
	if len(t.secret) == 0 {
		return base
	}
	h := base.Clone()
	h.Set(httpapi.BuyerTokenHeader, buyertoken.Sign(t.secret, user, t.expiry))
	return h
}
