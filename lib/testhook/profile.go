//go:build venomtest

package testhook

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profile starts the profiles the environment asks for and returns what
// stops and writes them (tests/README.md, "Knobs"): VENOM_TEST_CPUPROFILE
// for the whole command, VENOM_TEST_MEMPROFILE for the heap at its end.
// One that cannot be written is reported on stderr: a knob for measuring
// never fails a command.
func Profile() (stop func()) {
	cpu, mem := os.Getenv("VENOM_TEST_CPUPROFILE"), os.Getenv("VENOM_TEST_MEMPROFILE")
	if cpu == "" && mem == "" {
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
