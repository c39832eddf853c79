// Package harnessproc names the harness process a hook runs under (Claude
// Code, Codex) and tells later whether it still runs. A turn or a session
// whose process has exited can never report its end: Claude Code kills
// StopFailure hooks about 100 ms after starting them when `claude -p`
// exits, and Codex has no hook for a failed turn.
package harnessproc

import (
	"os"
	"strconv"
	"strings"
)

// ID is a process: its pid and its start time (clock ticks after boot, the
// 22nd field of /proc/<pid>/stat), so that a pid the kernel has reused for
// another process is not taken for it.
type ID struct {
	PID   int
	Start uint64
}

// procRoot is /proc; tests point it elsewhere.
var procRoot = "/proc"

// Of reads pid's start time; the zero ID when the process is not there.
func Of(pid int) ID {
	st, ok := stat(pid)
	if !ok {
		return ID{}
	}
	return ID{PID: pid, Start: st.start}
}

// Alive reports whether the process still runs. A zero ID (nothing was
// recorded) is not alive.
func (id ID) Alive() bool {
	if id.PID <= 0 {
		return false
	}
	st, ok := stat(id.PID)
	return ok && st.start == id.Start && st.state != 'Z'
}

// wrappers are the programs between a harness and its hook's process:
// the shell it runs hook commands with and git, which runs
// git-venom-checkpoint for `git venom-checkpoint`.
var wrappers = map[string]bool{"git": true, "sh": true, "bash": true, "dash": true, "zsh": true, "env": true,
	"timeout": true, "git-venom-check": true, "git-venom-checkpoint": true}

// Harness is the process that runs the hook's harness. A harness that
// names itself in a variable its hooks inherit gives its name as pidVar
// (Claude Code: CLAUDE_PID, OpenCode: OPENCODE_PID; Kind.PIDVar), the
// variable of that harness only: one harness started from another's shell
// inherits the other's too. Otherwise (Codex) it is the nearest ancestor
// of this process that is not a shell or git. The zero ID when none is
// found.
func Harness(getenv func(string) string, pidVar string) ID {
	if pid, err := strconv.Atoi(getenv(pidVar)); pidVar != "" && err == nil && pid > 1 {
		if id := Of(pid); id.PID != 0 {
			return id
		}
	}
	pid := os.Getppid()
	for hops := 0; pid > 1 && hops < 16; hops++ {
		st, ok := stat(pid)
		if !ok {
			return ID{}
		}
		if !wrappers[st.comm] {
			return ID{PID: pid, Start: st.start}
		}
		pid = st.ppid
	}
	return ID{}
}

type procStat struct {
	comm  string
	state byte
	ppid  int
	start uint64
}

// stat parses /proc/<pid>/stat. The command name is in parentheses and may
// itself hold spaces and parentheses: the fields follow the last ')'.
func stat(pid int) (procStat, bool) {
	b, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{comm: s[open+1 : end], state: f[0][0], ppid: ppid, start: start}, true
}
