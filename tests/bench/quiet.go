package main

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// cpuTimes reads the aggregate busy and total jiffies from /proc/stat.
func cpuTimes() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}

// waitQuiet waits, up to max, until the machine is at least minIdle idle
// over a short window, so that other work on a shared machine disturbs the
// timings less. It reports whether the machine was quiet.
func waitQuiet(minIdle float64, max time.Duration) bool {
	if minIdle <= 0 {
		return true
	}
	deadline := time.Now().Add(max)
	for {
		b0, t0, ok := cpuTimes()
		time.Sleep(250 * time.Millisecond)
		b1, t1, ok1 := cpuTimes()
		if !ok || !ok1 {
			return true
		}
		if t1 > t0 && 1-float64(b1-b0)/float64(t1-t0) >= minIdle {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
