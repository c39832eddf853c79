// Package codex is git-venom's Codex side: the rollout files' version, a
// JSON-RPC client for `codex app-server` and the rewind adapter that forks
// a thread through it (docs/rollback.md#conversation).
package codex

import (
	"bufio"
	"encoding/json"
	"os"

	"github.com/git-venom/git-venom/lib/statefile"
)

// RolloutVersion reads cli_version from a rollout's session_meta line (its
// first), or "". Only a regular file is opened (a FIFO cannot block it)
// and only its first line, of at most 4 MiB, is read.
func RolloutVersion(path string) string {
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	if !sc.Scan() {
		return ""
	}
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			CLIVersion string `json:"cli_version"`
		} `json:"payload"`
	}
	if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "session_meta" {
		return ""
	}
	return l.Payload.CLIVersion
}
