package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fetched copies have budgets: what a remote sends is
// measured before anything expands it, and a copy that fails git's checks
// costs only itself.

// copyRefused is fetch's refusal with its cap.
type copyRefused struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
	Cap    *struct {
		Key   string `json:"key"`
		Limit int64  `json:"limit"`
		Found int64  `json:"found"`
	} `json:"cap"`
}

type budgetFetch struct {
	Copies []struct {
		Copy        string   `json:"copy"`
		Checkpoints []string `json:"checkpoints"`
	} `json:"copies"`
	Refused []copyRefused `json:"refused"`
}

// forgeCheckpoint replaces checkpoint k<n> of a1 on the remote by a commit
// of the same message (its trailers) whose tree is k<n>'s plus extra
// entries (mktree lines), and the log copy's record of it, as an attacker
// who can push there would. It returns the forged commit.
func (c *sharedCopy) forgeCheckpoint(t *testing.T, n int, extra ...string) string {
	t.Helper()
	a := c.a
	ref := fmt.Sprintf("refs/venom/shared/%s/a1/%d", c.machine, n)
	old := a.Git("--git-dir="+c.remote, "rev-parse", ref)
	lines := a.Git("--git-dir="+c.remote, "ls-tree", old+"^{tree}")
	tree := a.GitInput(lines+"\n"+strings.Join(extra, "\n")+"\n", "--git-dir="+c.remote, "mktree")
	msg := a.Git("--git-dir="+c.remote, "show", "-s", "--format=%B", old)
	forged := a.GitInput(msg+"\n", "--git-dir="+c.remote, "commit-tree", tree)
	a.Git("--git-dir="+c.remote, "update-ref", ref, forged)
	c.forgeLog(t, func(rec map[string]any) map[string]any {
		if rec["type"] == "checkpoint.taken" && rec["checkpoint"] == fmt.Sprintf("k%d", n) {
			rec["repos"].([]any)[0].(map[string]any)["commit"] = forged
		}
		return rec
	})
	return forged
}

// treeChain starts one git mktree --batch in the remote: each call
// writes a tree of the mktree lines and returns its id, read before the
// next is written (each tree of a chain names the one before), instead of
// a git process a tree.
func (c *sharedCopy) treeChain(t *testing.T) func(lines ...string) string {
	t.Helper()
	cmd := exec.Command("git", "--git-dir="+c.remote, "mktree", "--batch")
	cmd.Dir, cmd.Env = c.a.Dir, c.a.Environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ended := false
	end := func() {
		if !ended {
			ended = true
			in.Close()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(end)
	ids := bufio.NewReader(out)
	return func(lines ...string) string {
		t.Helper()
		_, err := io.WriteString(in, strings.Join(lines, "\n")+"\n\n")
		id, rerr := ids.ReadString('\n')
		if err != nil || rerr != nil {
			end()
			t.Fatalf("git mktree --batch: %v %v: %s", err, rerr, stderr.String())
		}
		return strings.TrimSpace(id)
	}
}

// fetchBudget fetches origin into b and returns the result.
func fetchBudget(t *testing.T, b *Env) budgetFetch {
	t.Helper()
	var got budgetFetch
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	return got
}

// TestSecurity_CopyTreeBombRefused: twenty folders of two names for one
// subtree are a million paths from 21 tiny objects (diff of such a copy
// took 20 s and 700 MB). The copy's paths are counted without expanding
// them: fetch refuses it (budget, venom.copyMaxPaths), and once let in
// with the cap lifted, diff and rollback refuse it with
// failed.copy_budget as soon as the cap is back.
func TestSecurity_CopyTreeBombRefused(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	a := c.a
	blob := a.GitInput("x\n", "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	tree := c.treeChain(t)
	bomb := tree("100644 blob " + blob + "\tf")
	for i := 0; i < 20; i++ {
		bomb = tree("040000 tree "+bomb+"\ta", "040000 tree "+bomb+"\tb")
	}
	c.forgeCheckpoint(t, 2, "040000 tree "+bomb+"\tbomb")

	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	got := fetchBudget(t, b)
	k2 := "refs/venom/shared/" + c.machine + "/a1/2"
	require.Len(t, got.Refused, 1, "%+v", got)
	r := got.Refused[0]
	assert.Equal(t, k2, r.Ref)
	assert.Equal(t, "budget", r.Reason)
	require.NotNil(t, r.Cap)
	assert.Equal(t, "venom.copyMaxPaths", r.Cap.Key)
	assert.Equal(t, int64(500000), r.Cap.Limit)
	files := int64(len(strings.Fields(a.Git("ls-tree", "-r", "--name-only", "refs/venom/checkpoints/a1/2"))))
	assert.Equal(t, int64(1<<20)+files, r.Cap.Found, "every path the bomb stands for, and k2's own files")
	local := "refs/venom/remotes/origin/" + c.machine + "/a1/"
	refs := b.gitRefs("", "refs/venom/remotes/")
	assert.Contains(t, refs, local+"1")
	assert.NotContains(t, refs, local+"2", "the bomb is not fetched")
	human := b.Venom("checkpoint", "fetch")
	human.OK(t)
	assert.Contains(t, human.Stderr, fmt.Sprintf("budget: %d, past venom.copyMaxPaths 500000", r.Cap.Found))

	// Let in by a person who lifted the cap, it is still refused where
	// it would be expanded once the cap is back.
	b.SetGlobal("venom.copyMaxPaths", "0")
	got = fetchBudget(t, b)
	require.Empty(t, got.Refused)
	require.Contains(t, b.gitRefs("", "refs/venom/remotes/"), local+"2")
	b.Git("config", "--global", "--unset", "venom.copyMaxPaths")
	cp := "origin/" + c.machine + "/a1"
	diff := b.Venom("diff", "--agent="+cp, "k1", "k2", "--stat", "--json").Fails(t, 1, "failed.copy_budget")
	data := diff.Map(t)["error"].(map[string]any)["data"].(map[string]any)
	assert.Equal(t, cp, data["agent"])
	assert.Equal(t, "k2", data["checkpoint"])
	assert.Equal(t, "venom.copyMaxPaths", data["key"])
	b.TurnN("me", 1)
	snap := b.Snapshot()
	b.Venom("rollback", "--agent="+cp, "k2", "--into=me", "--dry-run", "--json").Fails(t, 1, "failed.copy_budget")
	human = b.Venom("diff", "--agent="+cp, "k1", "k2")
	assert.Equal(t, 1, human.Code)
	assert.Contains(t, human.Stderr, fmt.Sprintf("comes to %d paths, past venom.copyMaxPaths (500000)", r.Cap.Found))
	assert.Contains(t, human.Stderr, "git config --global venom.copyMaxPaths <n>")
	b.AssertUntouched(t, snap)
}

// TestSecurity_CopyDeepTreeRefused: a tree 30,000 folders deep took fetch
// 18 s and 1 GB (the path check built every prefix of every path) and
// crashed git in git venom-diff. The walk stops one folder past
// venom.copyMaxDepth and refuses the copy's checkpoint (budget), reading
// nothing below.
func TestSecurity_CopyDeepTreeRefused(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	a := c.a
	blob := a.GitInput("deep\n", "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	tree := c.treeChain(t)
	deep := tree("100644 blob " + blob + "\tf")
	for i := 0; i < 300; i++ {
		deep = tree("040000 tree " + deep + "\td")
	}
	c.forgeCheckpoint(t, 2, "040000 tree "+deep+"\tdeep")
	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	got := fetchBudget(t, b)
	require.Len(t, got.Refused, 1, "%+v", got)
	assert.Equal(t, "budget", got.Refused[0].Reason)
	require.NotNil(t, got.Refused[0].Cap)
	assert.Equal(t, "venom.copyMaxDepth", got.Refused[0].Cap.Key)
	assert.Equal(t, int64(257), got.Refused[0].Cap.Found)
	assert.NotContains(t, b.gitRefs("", "refs/venom/remotes/"), "refs/venom/remotes/origin/"+c.machine+"/a1/2")

	// Within a raised cap it comes in, and git reads it as usual.
	b.SetGlobal("venom.copyMaxDepth", "400")
	got = fetchBudget(t, b)
	require.Empty(t, got.Refused)
	cp := "origin/" + c.machine + "/a1"
	stat := b.Venom("diff", "--agent="+cp, "k1", "k2", "--name-only").OK(t).Stdout
	assert.Contains(t, stat, "deep/"+strings.Repeat("d/", 300)+"f")
}

// TestSecurity_CopyHugeFileBudgetAndPlanBytes: a checkpoint can hold a
// file far larger than its object (a gigabyte of zeros packs to a
// megabyte); the plan showed no size, and a rollback of the copy wrote
// all of it. The largest file and all files are capped
// (venom.copyMaxFileBytes, venom.copyMaxTotalBytes), and a dry run shows
// the bytes its writes come to, human and JSON.
func TestSecurity_CopyHugeFileBudgetAndPlanBytes(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	a := c.a
	zeros := a.GitInput(strings.Repeat("\x00", 64<<10), "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	c.forgeCheckpoint(t, 2, "100644 blob "+zeros+"\tbig.bin", "100644 blob "+zeros+"\tbig2.bin")
	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	k2 := "refs/venom/remotes/origin/" + c.machine + "/a1/2"
	b.SetGlobal("venom.copyMaxFileBytes", "32k")
	got := fetchBudget(t, b)
	require.Len(t, got.Refused, 1, "%+v", got)
	require.NotNil(t, got.Refused[0].Cap)
	assert.Equal(t, "venom.copyMaxFileBytes", got.Refused[0].Cap.Key)
	assert.Equal(t, int64(32<<10), got.Refused[0].Cap.Limit)
	assert.Equal(t, int64(64<<10), got.Refused[0].Cap.Found)
	assert.NotContains(t, b.gitRefs("", "refs/venom/remotes/"), k2)

	b.SetGlobal("venom.copyMaxFileBytes", "64k")
	b.SetGlobal("venom.copyMaxTotalBytes", "100k")
	got = fetchBudget(t, b)
	require.Len(t, got.Refused, 1, "%+v", got)
	require.NotNil(t, got.Refused[0].Cap)
	assert.Equal(t, "venom.copyMaxTotalBytes", got.Refused[0].Cap.Key)
	assert.Greater(t, got.Refused[0].Cap.Found, int64(128<<10), "both files counted")

	b.SetGlobal("venom.copyMaxTotalBytes", "1m")
	got = fetchBudget(t, b)
	require.Empty(t, got.Refused)
	require.Contains(t, b.gitRefs("", "refs/venom/remotes/"), k2)
	b.TurnN("me", 1)
	cp := "origin/" + c.machine + "/a1"
	var dry struct {
		Plan  string `json:"plan"`
		Repos []struct {
			Bytes int64 `json:"bytes"`
			Files []struct{ Path, Change string }
		} `json:"repos"`
	}
	b.Venom("rollback", "--agent="+cp, "k2", "--into=me", "--outside=overwrite", "--dry-run", "--json").OK(t).JSON(t, &dry)
	// What the plan writes, by plain git: the size of each file it
	// creates or modifies in k2.
	var want int64
	for _, f := range dry.Repos[0].Files {
		if f.Change == "delete" {
			continue
		}
		n, err := strconv.ParseInt(b.Git("cat-file", "-s", k2+":"+f.Path), 10, 64)
		require.NoError(t, err)
		want += n
	}
	assert.Greater(t, want, int64(128<<10))
	assert.Equal(t, want, dry.Repos[0].Bytes)
	human := b.Venom("rollback", "--agent="+cp, "k2", "--into=me", "--outside=overwrite", "--dry-run").OK(t).Stdout
	assert.Contains(t, human, "(writes 128.")
	assert.Contains(t, human, " KiB)")
	// Past the cap now, the real call is refused before it writes.
	b.SetGlobal("venom.copyMaxTotalBytes", "100k")
	b.Venom("rollback", "--agent="+cp, "k2", "--into=me", "--outside=overwrite", "--plan="+dry.Plan, "--json").
		Fails(t, 1, "failed.copy_budget")
	assert.NoFileExists(t, b.Path("big.bin"))
}

// TestSecurity_CopyBadObjectRefusesItsCopyOnly: a tree git's fsck refuses
// (an entry ".GIT") in one copy on the remote refuses that copy alone
// (objects); the others come in, though git fsck-checks a fetch whole.
func TestSecurity_CopyBadObjectRefusesItsCopyOnly(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	a := c.a
	blob := a.GitInput("x\n", "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	bad := a.GitInput("100644 blob "+blob+"\t.GIT\n", "--git-dir="+c.remote, "mktree")
	fake := "11111111-2222-3333-4444-555555555555"
	for _, agent := range []string{"e1", "e2"} {
		commit := a.GitInput("venom checkpoint\n\nVenom-Agent: "+agent+"\nVenom-Checkpoint: k1\nVenom-Reason: manual\n",
			"--git-dir="+c.remote, "commit-tree", bad)
		a.Git("--git-dir="+c.remote, "update-ref", "refs/venom/shared/"+fake+"/"+agent+"/1", commit)
	}
	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	// What a fetch killed mid-way leaves: its quarantine, with git's
	// unfinished pack in it. The next fetch removes it.
	stale := b.Path(".git/objects/venom-incoming-123/pack")
	require.NoError(t, os.MkdirAll(stale, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "tmp_pack_abc"), []byte("PACK"), 0o644))
	got := fetchBudget(t, b)
	require.Len(t, got.Copies, 1, "%+v", got)
	assert.Equal(t, "origin/"+c.machine+"/a1", got.Copies[0].Copy)
	// git's index-pack dies on the refused tree and leaves its tmp_pack_*;
	// the fetch received into a quarantine, so nothing of it is left in
	// the store.
	var left []string
	require.NoError(t, filepath.WalkDir(b.Path(".git/objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), "tmp_") || strings.HasPrefix(d.Name(), "venom-incoming-")) {
			left = append(left, p)
		}
		return err
	}))
	assert.Empty(t, left, "a failed fetch's files are left in the store")
	assert.Equal(t, []string{"k1", "k2"}, got.Copies[0].Checkpoints)
	refused := map[string]string{}
	for _, r := range got.Refused {
		refused[r.Ref] = r.Reason
	}
	assert.Equal(t, map[string]string{
		"refs/venom/shared/" + fake + "/e1/1": "objects",
		"refs/venom/shared/" + fake + "/e2/1": "objects",
	}, refused)
	refs := b.gitRefs("", "refs/venom/remotes/")
	assert.Len(t, refs, 3, "a1's two checkpoints and log: %v", refs)
	for name, oid := range refs {
		assert.Equal(t, "commit", b.Git("cat-file", "-t", oid), name)
	}
	b.Git("fsck", "--no-dangling")
}
