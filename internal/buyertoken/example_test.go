package buyertoken_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/flashsale/flashsale/internal/buyertoken"
)

// The load generator (or a login service) signs with the secret the shops
// share; a shop verifies the token and learns who is clicking.
func Example() {
	secret := []byte("a secret the shops share, 16+ bytes")
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

	tok := buyertoken.Sign(secret, "alice", now.Add(time.Hour))
	buyer, err := buyertoken.Verify(secret, tok, now)
	fmt.Println(buyer, err)

	_, err = buyertoken.Verify(secret, tok, now.Add(2*time.Hour))
	fmt.Println(errors.Is(err, buyertoken.ErrExpired))

	_, err = buyertoken.Verify([]byte("another shop's secret, 16+ bytes"), tok, now)
	fmt.Println(errors.Is(err, buyertoken.ErrForged))
	// Output:
	// alice <nil>
	// true
	// true
}
