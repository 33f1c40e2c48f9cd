// Package embedded owns the zero-setup backends: five in-process Redis
// servers (miniredis) on loopback ports and a SQLite database file in a fresh
// temporary directory. They let `go run ./cmd/shop`, `go run ./cmd/loadgen`
// and `go test ./...` work on a machine that has nothing but Go.
//
// Both are real servers as far as the code under test can tell: miniredis
// speaks RESP over TCP, and SQLite is a database. Code that talks to them is
// the same code that talks to Redis 7 and MySQL 8 in production.
package embedded
