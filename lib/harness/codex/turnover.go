package codex

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/statefile"
)

// A Codex turn whose model call fails ends with no hook at all (no
// StopFailure): in the TUI, whose process goes on running, its turn would
// stay open until the next prompt. Its rollout says it ended: an event_msg
// task_complete (with an error when it failed) or turn_aborted naming the
// turn (Codex 0.171.0, tests/realcodex_test.go).

// maxTail bounds the rollout read: the end of a turn is at the end of its
// thread's rollout while that turn is the latest.
const maxTail = 8 << 20

// turnOver reports whether the rollout of the turn's thread, found under
// $CODEX_HOME/sessions, records the turn's end.
func turnOver(t *agents.Turn) bool {
	if t.Session == "" || t.HarnessTurn == "" || strings.ContainsAny(t.Session, "/*?[\\") {
		return false
	}
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return false
		}
		home = filepath.Join(h, ".codex")
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+t.Session+".jsonl"))
	for _, f := range files {
		if RolloutTurnEnded(f, t.HarnessTurn) {
			return true
		}
	}
	return false
}

// RolloutTurnEnded reads the rollout's last 8 MiB (a regular file only)
// for the end of turn.
func RolloutTurnEnded(path, turn string) bool {
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTail {
		if _, err := f.Seek(-maxTail, io.SeekEnd); err != nil {
			return false
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxTail)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), turn) {
			continue
		}
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type   string `json:"type"`
				TurnID string `json:"turn_id"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.TurnID != turn {
			continue
		}
		if l.Payload.Type == "task_complete" || l.Payload.Type == "turn_aborted" {
			return true
		}
	}
	return false
}
