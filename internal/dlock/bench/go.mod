module github.com/flashsale/flashsale/internal/dlock/bench

go 1.26.8

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/bsm/redislock v0.9.4
	github.com/flashsale/flashsale v0.0.0
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/flashsale/flashsale => ../../..
