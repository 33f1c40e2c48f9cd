package tally

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// ReadMachine reads the aggregate line of /proc/stat (user nice system
// idle iowait irq softirq steal …): idle and iowait are not busy, and
// guest time is already counted in user and nice, so the sum stops at
// steal. Safe for concurrent use.
func ReadMachine() MachineTicks {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return MachineTicks{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return MachineTicks{}
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 5 || fields[0] != "cpu" {
		return MachineTicks{}
	}
	var t MachineTicks
	for i, v := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return MachineTicks{}
		}
		t.Total += n
		if i != 3 && i != 4 { // idle, iowait
			t.Busy += n
		}
	}
	t.OK = true
	return t
}
