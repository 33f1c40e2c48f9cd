package scenario

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Env describes the machine a run happened on, so that a number in a
// README can say which machine it came from.
type Env struct {
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	NumCPU    int    `json:"num_cpu"`
	CPUModel  string `json:"cpu_model,omitempty"`
	Hostname  string `json:"hostname,omitempty"`
}

// CurrentEnv describes this machine. It is safe for concurrent use.
func CurrentEnv() Env {
	host, _ := os.Hostname()
	return Env{
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), CPUModel: cpuModel(), Hostname: host,
	}
}

// cpuModel reads the CPU's name from /proc/cpuinfo on Linux; elsewhere it
// returns "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
