// Package scalefixture builds a repository with many checkpoints and a long
// log without running a capture for each: the commits and refs through one
// git fast-import, the log written line by line with lib/journal's record
// types, consistent with the refs (docs/checkpoints.md#the-log). Tests and tests/bench use it.
package scalefixture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/journal"
)

// Fixture is what Build made.
type Fixture struct {
	Dir         string
	Agent       string
	Checkpoints int
	Records     int
}

// Build makes, in the existing repository dir (at least one commit, clean
// tree), agent a1 (in place) with checkpoints turn checkpoints, two a turn,
// and about records log records in all, mostly edit calls. After turn t
// the files are HEAD's plus work/f<t%50>.txt reading t: turn t's
// turn_start checkpoint holds turn t-1's state, its turn_end its own. The
// working files end as the last checkpoint has them. env is the environment of every git call.
func Build(dir string, checkpoints, records int, env []string) (*Fixture, error) {
	git := func(stdin []byte, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return strings.TrimSpace(out.String()), nil
	}
	head, err := git(nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	branch, _ := git(nil, "symbolic-ref", "--short", "HEAD")
	top, err := git(nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	common, err := git(nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	when := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var stream bytes.Buffer
	for n := 1; n <= checkpoints; n++ {
		turn := (n + 1) / 2
		reason := "turn_start"
		if n%2 == 0 {
			reason = "turn_end"
		}
		msg := fmt.Sprintf("venom checkpoint a1/k%d\n\nVenom-Agent: a1\nVenom-Checkpoint: k%d\nVenom-Reason: %s\nVenom-Turn: t%d\n",
			n, n, reason, turn)
		// A turn changes the files; between turns nothing does, so no
		// window but the turns' own is a gap with changes (docs/rollback.md#classes).
		s := turn
		if n%2 == 1 {
			s = turn - 1
		}
		ts := when.Add(time.Duration(n) * time.Second).Unix()
		fmt.Fprintf(&stream, "commit refs/venom/checkpoints/a1/%d\nmark :%d\ncommitter venom <venom@localhost> %d +0000\ndata %d\n%sfrom %s\n",
			n, n, ts, len(msg), msg, head)
		if s > 0 {
			content := fmt.Sprintf("%d\n", s)
			fmt.Fprintf(&stream, "M 100644 inline work/f%02d.txt\ndata %d\n%s\n", s%50, len(content), content)
		}
	}
	stream.WriteString("get-mark :1\n")
	marks := filepath.Join(common, "venom-scale.marks")
	if _, err := git(stream.Bytes(), "fast-import", "--quiet", "--export-marks="+marks); err != nil {
		return nil, err
	}
	defer os.Remove(marks)
	commits := map[int]string{}
	b, err := os.ReadFile(marks)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var n int
		var oid string
		if _, err := fmt.Sscanf(line, ":%d %s", &n, &oid); err == nil {
			commits[n] = oid
		}
	}

	// The log.
	if err := os.MkdirAll(filepath.Join(common, "venom"), 0o777); err != nil {
		return nil, err
	}
	var log bytes.Buffer
	seq := 0
	add := func(typ string, payload any) error {
		seq++
		body, err := json.Marshal(payload)
		if err != nil {
			return err
		}
		ts := journal.Stamp(when.Add(time.Duration(seq) * time.Millisecond))
		fmt.Fprintf(&log, `{"seq":%d,"ts":%q,"type":%q,%s`+"\n", seq, ts, typ, body[1:])
		return nil
	}
	if err := add(journal.AgentRegistered, journal.Registered{Agent: "a1", Tree: top, Isolation: "in_place",
		Harness: "none"}); err != nil {
		return nil, err
	}
	turns := (checkpoints + 1) / 2
	edits := (records - 1 - 4*turns) / turns
	if edits < 0 {
		edits = 0
	}
	var through *string
	for turn := 1; turn <= turns; turn++ {
		tid := fmt.Sprintf("t%d", turn)
		_ = add(journal.TurnStarted, journal.TurnStart{Agent: "a1", Turn: tid})
		for _, n := range []int{2*turn - 1, 2 * turn} {
			if n > checkpoints {
				break
			}
			if n%2 == 0 {
				for e := 0; e < edits; e++ {
					_ = add(journal.EditRecorded, journal.Edit{Agent: "a1", Turn: tid,
						Paths: []string{fmt.Sprintf("work/f%02d.txt", (n+e)%50)}, Ignored: []string{}})
				}
				_ = add(journal.TurnEnded, journal.TurnEnd{Agent: "a1", Turn: tid})
				through = &tid
			}
			t := tid
			reason := "turn_start"
			if n%2 == 0 {
				reason = "turn_end"
			}
			h := head
			if err := add(journal.CheckpointTaken, journal.Taken{Agent: "a1", Checkpoint: fmt.Sprintf("k%d", n),
				Reason: reason, Turn: &t, ThroughTurn: through,
				At: journal.Stamp(when.Add(time.Duration(n) * time.Second)),
				Repos: []journal.RepoState{{Repo: ".", Path: top, Commit: commits[n], Head: &h, Branch: branch,
					Skipped: []journal.Skipped{}, Submodules: []journal.Submodule{}}}}); err != nil {
				return nil, err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(common, "venom", "log.jsonl"), log.Bytes(), 0o666); err != nil {
		return nil, err
	}
	// The working files as the last checkpoint has them.
	final := checkpoints / 2
	if final > 0 {
		if err := os.MkdirAll(filepath.Join(top, "work"), 0o777); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(top, "work", fmt.Sprintf("f%02d.txt", final%50)), []byte(fmt.Sprintf("%d\n", final)), 0o666); err != nil {
			return nil, err
		}
	}
	return &Fixture{Dir: top, Agent: "a1", Checkpoints: checkpoints, Records: seq}, nil
}
