//go:build !unix

package bench

import "time"

// cpuTime is not measured here; the benchmarks then report no cpu-ns/op.
func cpuTime() time.Duration { return 0 }
