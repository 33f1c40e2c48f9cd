package testenv

import (
	"context"
	"io"
	"log"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// The drivers log the faults the tests inject to stderr: every dial a
// stopped node refuses, every pooled connection a proxy cut. That is
// hundreds of lines a run, and they bury a failing test's own message. The
// errors they log are returned to the code under test as well, which is
// where the tests look, so in a test binary that uses testenv they are
// dropped.
func init() {
	redis.SetLogger(quietRedis{})
	_ = mysql.SetLogger(log.New(io.Discard, "", 0)) // fails only for nil
}

// quietRedis is go-redis's logger, dropping everything.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
