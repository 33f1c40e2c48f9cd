package testenv

import "testing"

// The quick path, go test -short, leaves out the long fault and chaos runs
// and shrinks the sales whose property no faster test checks; the full run
// (as CI runs it) is unchanged.

// SkipShort skips tb under go test -short. reason names what the full run
// does there that the quick path leaves out, and which faster test checks
// the same property in the quick path, if one does.
func SkipShort(tb testing.TB, reason string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: " + reason)
	}
}

// Short returns quick under go test -short and full otherwise: fewer
// buyers, rounds or modes for a test that keeps a smaller version in the
// quick path.
func Short[T any](quick, full T) T {
	if testing.Short() {
		return quick
	}
	return full
}
