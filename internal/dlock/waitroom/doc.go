// Package waitroom is how package dlock's locks wait for a held key, so
// that no lock mode carries waiting machinery of its own. A lock makes one
// attempt at a time (a Try); a Room does the rest:
//
//   - the goroutines of one process queue per key, and only the first, the
//     head, asks Redis (room.go);
//   - a release is announced on the key's pub/sub channel (Channel), and a
//     Subscriber wakes the head when it hears one (wait.go, listen.go,
//     subscriber.go); without one the head sleeps until a key taken with
//     its own TTL would have expired;
//   - between processes one fairness rule decides which releases are
//     announced at once and when a head may try (fair.go);
//   - a lua or fenced lock's scripts run with the key's turns around them,
//     so that waiters that ask for turns take the key first come, first
//     served (turns.go).
//
// The seam is small: a lock calls Wait with its Try, asks Releasing before
// it releases a lock a waiter got (and Abandoned when it lets one run out),
// runs its scripts through Turns, and announces its own releases on
// Channel. The room knows a lock only as a Held.
package waitroom
