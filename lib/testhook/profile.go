//go:build venomtest

package testhook

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

// Profile starts the profiles the environment asks for and returns what
// stops and writes them (tests/README.md, "Knobs"): VENOM_TEST_CPUPROFILE
// for the whole command, VENOM_TEST_MEMPROFILE for the heap at its end,
// VENOM_TEST_PEAKRSS for the command's peak resident set. One that cannot
// be written is reported on stderr: a knob for measuring never fails a
// command.
func Profile() (stop func()) {
	cpu, mem := os.Getenv("VENOM_TEST_CPUPROFILE"), os.Getenv("VENOM_TEST_MEMPROFILE")
	peak := os.Getenv("VENOM_TEST_PEAKRSS")
	if cpu == "" && mem == "" && peak == "" {
		return func() {}
	}
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "VENOM_TEST_CPUPROFILE:", err)
		} else {
			cpuFile = f
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if peak != "" {
			if err := writePeak(peak); err != nil {
				fmt.Fprintln(os.Stderr, "VENOM_TEST_PEAKRSS:", err)
			}
		}
		if mem == "" {
			return
		}
		// The profile holds what the last collection saw: one now takes in
		// what the command allocated since.
		runtime.GC()
		f, err := os.Create(mem)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "VENOM_TEST_MEMPROFILE:", err)
		}
	}
}

// writePeak writes the process's peak resident set, in bytes, to file:
// VmHWM, the high-water mark of its own address space. Not wait4's or
// getrusage's ru_maxrss: Go starts a child with vfork, so the child runs
// in its parent's address space until it calls exec, and Linux takes the
// high-water mark of that space into the child's ru_maxrss at the exec. A
// command started by a test binary that had grown to 700 MiB reported
// 700 MiB, whatever the command itself used.
func writePeak(file string) error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kib, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
			if err != nil {
				return fmt.Errorf("VmHWM: %w", err)
			}
			return os.WriteFile(file, []byte(strconv.FormatInt(kib<<10, 10)+"\n"), 0o644)
		}
	}
	return fmt.Errorf("no VmHWM in /proc/self/status")
}
