// Package codex is git-venom's Codex side: the rollout files' version, a
// JSON-RPC client for `codex app-server` and the rewind adapter that forks
// a thread through it (RFC 8).
package codex

import (
	"bufio"
	"encoding/json"
	"os"
)

// RolloutVersion reads cli_version from a rollout's session_meta line (its
// first), or "".
func RolloutVersion(path string) string {
	f, err := os.Open(path)
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
