package plan

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/ui"
)

// WriteJSON writes what ui.Streams.JSON writes, byte for byte: names
// with every character encoding/json escapes, U+2028, invalid UTF-8, a
// member name inside a path, details and path_b64 present and absent,
// empty lists, and every member of the result set.
func TestWriteJSON_AsMarshal(t *testing.T) {
	detail, id, yes := "why \"so\"", "p1-0123456789abcdef", true
	through := "t2"
	odd := []string{"plain.txt", "quote\"back\\slash", "ctl\x00\x01\b\f\n\r\t\x1f\x7f", "line\u2028para\u2029",
		"bad\xff\xfeutf8", "é/ü/日本", `"files":null,"left":null`, "<html>&amp;", ""}
	full := &Result{Agent: "a1", Copy: "origin/m/a1", Checkpoint: "k1", DryRun: true, Plan: &id, Restore: "files",
		Paths: []string{"a b", "c\"d"}, Guarded: &yes, Safety: &id, After: &id, Exact: &yes,
		Conversation: Conversation{ThroughTurn: &through, Drops: []string{"t3"}, HarnessSession: "s", Resume: []string{"x"}},
		SharedWith:   []string{}, Children: []string{"c1"}}
	rj := RepoJSON{Repo: ".", Path: "/top/\"dir\"", Head: Head{From: &id, To: &id, Commits: 2, Moves: true},
		Files: []FileJSON{}, Left: []LeftJSON{}, IgnoredEdits: []string{"e\n"}}
	for i, p := range odd {
		rj.Files = append(rj.Files, FileJSON{Path: p, Change: "delete", Class: "turn"})
		l := LeftJSON{Path: p, Reason: "too_big"}
		if i%2 == 0 {
			rj.Files[i].PathB64 = "YmFk/w=="
			l.Detail = &detail
		} else {
			l.PathB64 = p
		}
		rj.Left = append(rj.Left, l)
	}
	full.Repos = []RepoJSON{rj}
	empty := &Result{Agent: "a", Checkpoint: "k2", Restore: "all", Conversation: Conversation{Drops: []string{}},
		SharedWith: []string{}, Children: []string{},
		Repos: []RepoJSON{{Repo: ".", Path: "/t", Files: []FileJSON{}, Left: []LeftJSON{}}}}
	noRepos := &Result{Agent: "a", Checkpoint: "k2", Restore: "all"}
	for name, r := range map[string]*Result{"full": full, "empty lists": empty, "no repos": noRepos} {
		want, err := ui.Marshal(r)
		require.NoError(t, err)
		var got bytes.Buffer
		require.NoError(t, r.WriteJSON(&got), name)
		require.Equal(t, string(want)+"\n", got.String(), name)
	}
}
