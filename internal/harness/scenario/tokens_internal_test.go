package scenario

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/buyertoken"
	"github.com/flashsale/flashsale/internal/httpapi"
)

// TestClickTokens: with a secret every click carries its own buyer's
// token, good for the whole attack; without one no click carries any.
func TestClickTokens(t *testing.T) {
	s := DefaultSettings()
	s.Users = 40
	now := time.Now()
	secret := "scenario-test-secret-16+"

	t.Run("signed", func(t *testing.T) {
		for _, tg := range newCrowd(s).targets([]string{"http://x"}, []string{"p"}, newClickTokens(secret, s, now)) {
			var body struct {
				UserID string `json:"user_id"`
			}
			if err := json.Unmarshal(tg.Body, &body); err != nil {
				t.Fatal(err)
			}
			at := now.Add(s.Duration + s.Timeout)
			got, err := buyertoken.Verify([]byte(secret), tg.Header.Get(httpapi.BuyerTokenHeader), at)
			if err != nil || got != body.UserID {
				t.Fatalf("token of %s's click verifies at the attack's end as %q, %v; want %q, nil", body.UserID, got, err, body.UserID)
			}
			if ct := tg.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q, want application/json", ct)
			}
		}
	})
	t.Run("open", func(t *testing.T) {
		for _, tg := range newCrowd(s).targets([]string{"http://x"}, []string{"p"}, newClickTokens("", s, now)) {
			if tok := tg.Header.Get(httpapi.BuyerTokenHeader); tok != "" {
				t.Fatalf("click carries token %q with no secret", tok)
			}
		}
	})
}
