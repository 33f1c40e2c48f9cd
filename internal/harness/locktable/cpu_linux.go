package locktable

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// readCPU reads this process's CPU time (getrusage) and the machine's
// ticks (the first line of /proc/stat: user nice system idle iowait irq
// softirq steal …; idle and iowait are not busy).
func readCPU() cpuSample {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuSample{}
	}
	s := cpuSample{proc: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuSample{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return cpuSample{}
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 5 || fields[0] != "cpu" {
		return cpuSample{}
	}
	// Guest time is already counted in user and nice: stop at steal.
	for i, v := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return cpuSample{}
		}
		s.total += n
		if i != 3 && i != 4 { // idle, iowait
			s.busy += n
		}
	}
	s.ok = true
	return s
}
