package testenv

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkProxyHop measures what the fault-injection proxy costs a Redis
// round trip, against the same server reached directly.
func BenchmarkProxyHop(b *testing.B) {
	for _, m := range RedisModes(b) {
		r := NewRedis(b, m)
		for _, via := range []struct {
			name string
			addr string
		}{{"direct", r.DirectAddrs()[0]}, {"proxy", r.Addrs()[0]}} {
			b.Run(string(m)+"/"+via.name, func(b *testing.B) {
				c := redis.NewClient(clientOptions(via.addr))
				defer c.Close()
				ctx := context.Background()
				b.SetParallelism(32) // 64 goroutines on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := c.Ping(ctx).Err(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
