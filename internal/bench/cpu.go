package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// hostCPU is a reading of the machine's CPU time counters (Linux
// /proc/stat, in clock ticks): busy and total over all CPUs.
type hostCPU struct {
	busy, total uint64
	ok          bool
}

// readHostCPU reads /proc/stat; ok is false where there is none.
func readHostCPU() hostCPU {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return hostCPU{}
	}
	defer f.Close()
	h, err := parseProcStat(f)
	if err != nil {
		return hostCPU{}
	}
	return h
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: user nice
// system idle iowait irq softirq steal …; idle and iowait are not busy.
func parseProcStat(r io.Reader) (hostCPU, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[0] != "cpu" {
			continue
		}
		var h hostCPU
		for i, f := range fields[1:] {
			if i >= 8 { // guest time is already in user
				break
			}
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return hostCPU{}, fmt.Errorf("/proc/stat: %w", err)
			}
			h.total += v
			if i != 3 && i != 4 {
				h.busy += v
			}
		}
		h.ok = true
		return h, nil
	}
	if err := sc.Err(); err != nil {
		return hostCPU{}, fmt.Errorf("/proc/stat: %w", err)
	}
	return hostCPU{}, fmt.Errorf("/proc/stat: no cpu line")
}

// busyPercent is the share of all CPUs' time that was busy between a and
// b, in % (100 = every CPU busy all the time); -1 when unknown.
func busyPercent(a, b hostCPU) float64 {
	if !a.ok || !b.ok || b.total <= a.total {
		return -1
	}
	return 100 * float64(b.busy-a.busy) / float64(b.total-a.total)
}
