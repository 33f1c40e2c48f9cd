package bench

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Settings shared by every benchmark.
const (
	benchTTL  = 10 * time.Second // far longer than any op: no watchdog renewal, no expiry
	benchWait = 30 * time.Second // generous: under contention a waiter should get in, not time out
)

// mode pairs one of this package's modes with its peer library.
type mode struct {
	name  string
	impls func(nodes []*redis.Client) []impl
}

var modes = []mode{{"lua", luaImpls}, {"redlock", redlockImpls}, {"etcd", etcdImpls}}

// BenchmarkUncontended takes and releases a fresh key per op, one op at a
// time: the latency of an acquire plus a release when nobody else wants the
// lock, and the CPU time this process spent on it (cpu-ns/op; with the
// embedded nodes that includes the in-process miniredis servers). op=try is the single attempt (TryLock, Obtain with no retry,
// TryLockContext); op=lock is the waiting acquire, which finds the key free.
func BenchmarkUncontended(b *testing.B) {
	ops := []struct {
		name string
		wait time.Duration
	}{{"try", 0}, {"lock", benchWait}}
	for _, md := range modes {
		impls := md.impls(nodes)
		for _, op := range ops {
			for _, im := range impls {
				b.Run("mode="+md.name+"/op="+op.name+"/impl="+im.name, func(b *testing.B) {
					ctx := context.Background()
					b.ReportAllocs()
					cpu := cpuTime()
					for range b.N {
						release, err := im.lock(ctx, newKey("u"), benchTTL, op.wait)
						if err != nil {
							b.Fatalf("lock: %v", err)
						}
						if err := release(ctx); err != nil {
							b.Fatalf("release: %v", err)
						}
					}
					reportCPU(b, cpu)
				})
			}
		}
		for _, im := range impls {
			im.close()
		}
	}
}

// reportCPU reports the process CPU time used since start per op, as
// cpu-ns/op. Call it while the timer runs, before any clean-up.
func reportCPU(b *testing.B, start time.Duration) {
	if start == 0 {
		return // not measured on this platform
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
