package database

import (
	"context"
	"log"
	"os"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// slowQuery is the duration above which a statement is logged as slow.
const slowQuery = time.Second

// slowOnly passes only slow, successful statements on to its logger.
// GORM's own levels cannot say "slow queries but not errors": at Warn it also
// prints every failed statement, which during a fault test or a sold-out rush
// is one line per buyer.
type slowOnly struct {
	logger.Interface
}

// quietLogger is the GORM logger of every database opened here: it logs
// only statements slower than a second, never each query or each error
// (errors are returned to the caller, who decides whether they are worth a
// line).
func quietLogger() logger.Interface {
	return slowOnly{logger.New(log.New(os.Stderr, "", log.LstdFlags), logger.Config{
		SlowThreshold:             slowQuery,
		LogLevel:                  logger.Warn,
		IgnoreRecordNotFoundError: true,
		ParameterizedQueries:      true, // never print user data
	})}
}

func (l slowOnly) LogMode(level logger.LogLevel) logger.Interface {
	return slowOnly{l.Interface.LogMode(level)}
}

func (l slowOnly) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err == nil && time.Since(begin) > slowQuery {
		l.Interface.Trace(ctx, begin, fc, nil)
	}
}

// gormConfig is the GORM configuration shared by both backends.
func gormConfig(o options) *gorm.Config {
	return &gorm.Config{
		Logger: quietLogger(),
		// The order flow opens its own transaction where it needs one; a
		// hidden transaction around every single INSERT only costs round
		// trips.
		SkipDefaultTransaction: true,
		// Duplicate primary keys come back as gorm.ErrDuplicatedKey on both
		// backends, so callers need not know driver error codes.
		TranslateError: true,
		// Store UTC with microseconds, which is what DATETIME(6) keeps, so a
		// value reads back equal to what was written.
		NowFunc: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
	}
}
