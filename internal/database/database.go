// Package database owns opening the shop's SQL database: MySQL 8 or MariaDB
// through gorm.io/driver/mysql for real deployments, and SQLite through the
// pure-Go github.com/glebarez/sqlite driver for the embedded default. It
// chooses the settings a flash sale needs — a connection pool wide enough
// for dozens of concurrent buyers, one round trip per statement on MySQL,
// no SQLITE_BUSY failures when buyers write at once — so that callers only
// pass a DSN or a path. The schema itself lives in package migrations.
package database

import (
	"database/sql/driver"
	"errors"
)

// Errors returned by OpenMySQL and OpenSQLite; they are wrapped with the
// details, so compare with errors.Is.
var (
	// ErrInvalidDSN means the data source name could not be parsed or asks
	// for something this package cannot honour.
	ErrInvalidDSN = errors.New("database: invalid DSN")
	// ErrUnavailable means the database did not answer the initial ping.
	ErrUnavailable = errors.New("database: unavailable")
)

// Option changes how OpenMySQL and OpenSQLite set up the connection.
type Option func(*options)

type options struct {
	maxOpen int
	wrap    func(driver.Connector) driver.Connector
	addr    func(string) (string, error)
}

// WithMaxOpenConns caps the pool at n open connections (n > 0). The default
// is 64 for MySQL and 8 for SQLite. Remember that every process holding a
// pool counts against the server's max_connections.
func WithMaxOpenConns(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxOpen = n
		}
	}
}

// WithConnector lets the caller wrap the driver's connector, for instance to
// count connections or, in tests, to make every statement fail while a fault
// is injected (package testenv does this for SQLite).
func WithConnector(wrap func(driver.Connector) driver.Connector) Option {
	return func(o *options) { o.wrap = wrap }
}

// WithAddr makes OpenMySQL dial the address addr returns for the DSN's
// (host:port) instead of the DSN's own, for instance a proxy that delays
// the link (package netsim); the DSN, its password included, is left as
// it is. OpenSQLite has no address and ignores it. An error from addr is
// OpenMySQL's, wrapping ErrUnavailable.
func WithAddr(addr func(string) (string, error)) Option {
	return func(o *options) { o.addr = addr }
}

func buildOptions(maxOpen int, opts []Option) options {
	o := options{maxOpen: maxOpen}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
