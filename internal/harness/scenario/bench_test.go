package scenario_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/app"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/testenv"
)

// saleRuns numbers BenchmarkSale's attacks, which name their products by
// it: -count runs the benchmark again on the same database.
var saleRuns atomic.Int64

// BenchmarkSale is the sale a user sees, end to end: the crowd of the load
// generator, through HTTP, over three shops (app.NewShop each, as
// StartFleet runs them), on one hot product that never sells out, at a
// fixed offered rate. BenchmarkPlace (package order) calls the order
// service directly in one process; this one pays for what it leaves out:
// the shops' HTTP and JSON, their waiting rooms, and the lock changing
// hands between shops. Each op is one attack of 2.5 buyers per req/s
// (each clicking once or twice, about 5 s of clicks) at that rate, with
// the default work in the critical section and no stalls, as
//
//	go run ./cmd/loadgen --strategies M --rate R --users R*5/2 --stock 1000000 --stall-rate 0
//
// does. It reports orders/s, p99 in ms, the 503s, and the CPU
// milliseconds per order of the whole test process (shops, embedded
// backends, the attacker; a real database and Redis are not in it).
// Run it alone, on a quiet machine, a few times:
//
//	go test -run '^$' -bench BenchmarkSale -benchtime 1x -count 3 ./internal/harness/scenario
//
// With FLASHSALE_TEST_MYSQL_DSN and FLASHSALE_TEST_REDIS_ADDRS set it runs on
// the real servers too.
func BenchmarkSale(b *testing.B) {
	if testing.Short() {
		b.Skip("an attack per op")
	}
	strategies := []scenario.Strategy{"sql-atomic", "redis-decr", "lua", "fenced+batch"}
	for _, env := range testenv.EnvModes(b) {
		e := testenv.NewEnv(b, env).WithEtcd(b)
		f, err := fleet.StartFleet(context.Background(), fleet.FleetConfig{
			Backends: &app.Backends{DB: e.DB.DB(), RedisAddrs: e.Redis.Addrs(), EtcdEndpoints: e.Etcd.Endpoints()},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		for _, rate := range []int{1000, 2000} {
			for _, strategy := range strategies {
				b.Run(fmt.Sprintf("%s/strategy=%s/rate=%d", env, strategy, rate), func(b *testing.B) {
					s := scenario.DefaultSettings()
					s.Strategies, s.Rate, s.Users = []scenario.Strategy{strategy}, rate, rate*5/2
					s.Stock, s.StallRate, s.Duration = 1_000_000, 0, 8*time.Second
					var orders, busy int
					var elapsed, p99, cpu time.Duration
					run := 0
					for b.Loop() {
						run++
						out, err := scenario.Run(context.Background(), s, f, scenario.Options{
							RunID: fmt.Sprintf("%s-bench-%d-%d", runID(e), rate, saleRuns.Add(1))})
						if err != nil {
							b.Fatal(err)
						}
						m := out.Strategies[0]
						orders += m.Tally.Accepted()
						elapsed += m.Elapsed()
						p99 = max(p99, m.Metrics.Latencies.P99)
						cpu += m.CPU
						for k, n := range m.Tally.Errors {
							if strings.HasPrefix(k, "503 ") {
								busy += n
							}
						}
					}
					b.ReportMetric(float64(orders)/elapsed.Seconds(), "orders/s")
					b.ReportMetric(float64(p99)/float64(time.Millisecond), "p99-ms")
					b.ReportMetric(float64(busy)/float64(run), "503s/op")
					if orders > 0 {
						b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(orders), "cpu-ms/order")
					}
					b.ReportMetric(0, "ns/op") // an op is an attack of fixed size: its time says nothing
				})
			}
		}
	}
}
