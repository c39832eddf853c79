package tests

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Many tests make the same commits on the same files (their setup
// helpers): Commit keeps what git add -A and git commit changed under
// .git, keyed by everything git reads for them, and writes that again
// where a later commit starts from the same state (commitMemo). It keys
// only what it is sure of (commitKey); anything else runs git.

// commitDelta is what one commit changed under .git: folders made and
// files written, each with its mode.
type commitDelta struct {
	dirs  []deltaFile
	files []deltaFile
}

type deltaFile struct {
	rel  string
	mode fs.FileMode
	data []byte
}

var (
	commitMemoMu sync.Mutex
	commitMemo   = map[string]*commitDelta{}
	// commitMemoHits counts the commits written from the memo.
	commitMemoHits int
	// commitMemoOff makes every Commit run git (the memo's own test).
	commitMemoOff bool
)

// gitFile is one file or folder under .git as commitKey saw it.
type gitFile struct {
	mode fs.FileMode
	sum  [sha256.Size]byte
}

// commitKey is the key of a commit of msg from the repository's state,
// and the files under .git then; false where the state is not one the
// memo is sure of: a world whose settings, hooks or index git might read
// otherwise, a nested repository, a file the index trusts by its stat
// data alone while its content differs.
func (e *Env) commitKey(msg string) (string, map[string]gitFile, bool) {
	commitMemoMu.Lock()
	off := commitMemoOff
	commitMemoMu.Unlock()
	if off || fsmonitorMode() || len(e.Extra) != 0 {
		return "", nil, false
	}
	if _, err := os.Lstat(filepath.Join(e.Home, ".config")); !os.IsNotExist(err) {
		return "", nil, false
	}
	if b, err := os.ReadFile(filepath.Join(e.Home, ".gitconfig")); err != nil || string(b) != worldConfig {
		return "", nil, false
	}
	gitDir := filepath.Join(e.Dir, ".git")
	if dir, ok := plainCommonDir(e.Dir, e.Environ()); !ok || dir != gitDir {
		return "", nil, false
	}
	initial, err := os.ReadFile(filepath.Join(initialRepo(e.t), ".git", "config"))
	if cfg, err2 := os.ReadFile(filepath.Join(gitDir, "config")); err != nil || err2 != nil || !bytes.Equal(cfg, initial) {
		return "", nil, false
	}
	h := sha256.New()
	e.mu.Lock()
	fmt.Fprintf(h, "commit %q at %d\x00", msg, e.tick)
	e.mu.Unlock()
	// The working files: names, modes, owners, contents as blob ids.
	blobs := map[string]string{}
	sure := true
	err = filepath.WalkDir(e.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.Dir, p)
		if rel == ".git" && p == gitDir {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, isUnix := fi.Sys().(*syscall.Stat_t)
		if d.Name() == ".git" || !isUnix {
			sure = false
			return filepath.SkipAll
		}
		var content []byte
		switch {
		case fi.IsDir():
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			content = []byte(target)
		case fi.Mode().IsRegular():
			if content, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			sure = false
			return filepath.SkipAll
		}
		blob := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(content))), content...))
		blobs[filepath.ToSlash(rel)] = hex.EncodeToString(blob[:])
		fmt.Fprintf(h, "w %q %v %d %d %x\x00", rel, fi.Mode(), st.Uid, st.Gid, blob)
		return nil
	})
	if err != nil || !sure {
		return "", nil, false
	}
	files, ok := readGitDir(gitDir)
	if !ok {
		return "", nil, false
	}
	for _, rel := range sortedKeys(files) {
		f := files[rel]
		if rel == "index" {
			continue // below, without its stat data
		}
		if rel == "objects/info/alternates" || strings.HasPrefix(rel, "hooks/") && !f.mode.IsDir() && !strings.HasSuffix(rel, ".sample") {
			return "", nil, false
		}
		fmt.Fprintf(h, "g %q %v %x\x00", rel, f.mode, f.sum)
	}
	idx, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if err != nil {
		return "", nil, false
	}
	entries, ok := indexForKey(e.Dir, idx, blobs)
	if !ok {
		return "", nil, false
	}
	h.Write(entries)
	return hex.EncodeToString(h.Sum(nil)), files, true
}

// indexForKey is the index's entries without the stat data git may
// rewrite (times, device, inode), and its extensions; false for an
// index walkIndex is unsure of, one with an extension but the cache
// tree, an entry in conflict, flagged (assume-unchanged, skip-worktree,
// intent to add) or no file's, or one whose file git might take for
// unchanged by its size and time while its content is another.
func indexForKey(top string, idx []byte, blobs map[string]string) ([]byte, bool) {
	var out []byte
	end, sure := 12, true
	ok := walkIndex(idx, func(entry []byte, flags uint16, name string) {
		end = cap(idx) - cap(entry) + len(entry)
		be := binary.BigEndian
		mode := be.Uint32(entry[24:])
		if flags&0x7000 != 0 || mode>>12 != 0o10 && mode>>12 != 0o12 {
			sure = false
			return
		}
		oid := hex.EncodeToString(entry[40:60])
		if blobs[name] != oid {
			fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(name)))
			if err == nil {
				st := fi.Sys().(*syscall.Stat_t)
				if uint32(st.Mtim.Sec) == be.Uint32(entry[8:]) && uint32(st.Size) == be.Uint32(entry[36:]) {
					sure = false
				}
			}
		}
		out = append(out, entry[24:]...)
	})
	if !ok || !sure {
		return nil, false
	}
	body := idx[:len(idx)-sha1.Size]
	for off := end; off < len(body); {
		if string(body[off:off+4]) != "TREE" {
			return nil, false
		}
		off += 8 + int(binary.BigEndian.Uint32(body[off+4:]))
	}
	return append(out, body[end:]...), true
}

// readGitDir reads every file and folder under dir, false on anything
// but those.
func readGitDir(dir string) (map[string]gitFile, bool) {
	files := map[string]gitFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		f := gitFile{mode: fi.Mode()}
		switch {
		case fi.IsDir():
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f.sum = sha256.Sum256(b)
		default:
			return fmt.Errorf("%s: not a file", p)
		}
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	return files, err == nil
}

// commitWrites is what git add -A and git commit write under .git: the
// index, new loose objects, a branch, the logs, the message.
var commitWrites = regexp.MustCompile(`^(index|COMMIT_EDITMSG|HEAD|logs|logs/HEAD|objects/[0-9a-f]{2}|objects/[0-9a-f]{2}/[0-9a-f]{38}|logs/refs|(logs/)?refs/heads(/[-a-zA-Z0-9_.]+)*)$`)

// deltaOf is what changed under gitDir since before; false where that
// is more than a commit writes or anything went away (a command beside
// the commit).
func deltaOf(gitDir string, before map[string]gitFile) (*commitDelta, bool) {
	after, ok := readGitDir(gitDir)
	if !ok || len(after) < len(before) {
		return nil, false
	}
	d := &commitDelta{}
	size := 0
	for _, rel := range sortedKeys(after) {
		f := after[rel]
		if was, ok := before[rel]; ok && was == f {
			continue
		}
		if !commitWrites.MatchString(rel) {
			return nil, false
		}
		df := deltaFile{rel: rel, mode: f.mode}
		if f.mode.IsDir() {
			d.dirs = append(d.dirs, df)
			continue
		}
		b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(rel)))
		if err != nil || sha256.Sum256(b) != f.sum {
			return nil, false
		}
		df.data = b
		size += len(b)
		d.files = append(d.files, df)
	}
	for rel := range before {
		if _, ok := after[rel]; !ok {
			return nil, false
		}
	}
	// apply writes objects first, the index, logs and branch after them.
	sort.SliceStable(d.files, func(i, j int) bool {
		return strings.HasPrefix(d.files[i].rel, "objects/") && !strings.HasPrefix(d.files[j].rel, "objects/")
	})
	return d, size < 1<<20
}

// apply writes the delta under gitDir, then the index's stat data as
// git add would (restatIndex); false where that could not be done.
func (d *commitDelta) apply(top string) bool {
	gitDir := filepath.Join(top, ".git")
	for _, f := range d.dirs {
		p := filepath.Join(gitDir, filepath.FromSlash(f.rel))
		if err := os.Mkdir(p, f.mode.Perm()); err != nil && !os.IsExist(err) {
			return false
		}
		if os.Chmod(p, f.mode.Perm()) != nil {
			return false
		}
	}
	for _, f := range d.files {
		p := filepath.Join(gitDir, filepath.FromSlash(f.rel))
		tmp := p + ".memo"
		if os.WriteFile(tmp, f.data, f.mode.Perm()) != nil || os.Chmod(tmp, f.mode.Perm()) != nil || os.Rename(tmp, p) != nil {
			return false
		}
	}
	return restatIndex(top)
}

// A commit written from the memo leaves what git add -A and git commit
// leave: the same files under .git (the index but for its stat data),
// an index git finds clean and whole, the same objects and history.
func TestEnv_CommitMemoIsGits(t *testing.T) {
	setup := func(e *Env) {
		e.Write("a.txt", "a\n")
		e.Write("d/b.txt", "b\n")
		require.NoError(t, os.Symlink("a.txt", e.Path("link")))
		require.NoError(t, os.Chmod(e.Path("d/b.txt"), 0o755))
		e.Commit("first")
		e.Write("a.txt", "changed\n")
		e.Remove("d/b.txt")
		e.Write("new.txt", "new\n")
		e.Commit("second")
	}
	commitMemoMu.Lock()
	hits := commitMemoHits
	commitMemoMu.Unlock()
	first := NewEnv(t)
	setup(first) // fills the memo, or finds it filled
	memo := NewEnv(t)
	setup(memo)
	commitMemoMu.Lock()
	require.GreaterOrEqual(t, commitMemoHits-hits, 2, "the second world's commits were not the memo's")
	commitMemoMu.Unlock()
	plain := NewEnv(t)
	commitMemoMu.Lock()
	commitMemoOff = true
	commitMemoMu.Unlock()
	setup(plain)
	commitMemoMu.Lock()
	commitMemoOff = false
	commitMemoMu.Unlock()

	files := func(e *Env) map[string]gitFile {
		f, ok := readGitDir(filepath.Join(e.Dir, ".git"))
		require.True(t, ok)
		delete(f, "index")
		return f
	}
	assert.Equal(t, files(plain), files(memo), "the files under .git differ")
	// Before git status, which would write its refreshed index.
	assert.Empty(t, memo.Git("diff-files", "--name-only"), "the index's stat data is not its files'")
	for _, args := range [][]string{
		{"rev-parse", "HEAD", "HEAD^{tree}", "HEAD~1"},
		{"ls-files", "-s", "--debug"},
		{"status", "--porcelain=v1", "--untracked-files=all"},
		{"reflog", "--format=%H %gs"},
		{"count-objects", "-v"},
		{"fsck", "--strict", "--no-dangling"},
	} {
		want, got := plain.GitRaw(args...), memo.GitRaw(args...)
		if args[0] == "ls-files" { // stat data: each world's own files'
			want.Stdout = regexp.MustCompile(`(?m)^  (ctime|mtime|dev|ino).*\n`).ReplaceAllString(want.Stdout, "")
			got.Stdout = regexp.MustCompile(`(?m)^  (ctime|mtime|dev|ino).*\n`).ReplaceAllString(got.Stdout, "")
		}
		assert.Equal(t, want, got, "git %v", args)
	}
}

// SetGlobal's own writes are git config --global's, byte for byte,
// through a sequence of the cases it writes and those it leaves to git.
func TestEnv_SetGlobalIsGits(t *testing.T) {
	t.Parallel()
	mine, gits := NewBareEnv(t), NewBareEnv(t)
	plain := 0
	for _, kv := range [][2]string{
		{"venom.timeout", "5s"},        // a new section
		{"venom.keep", "3"},            // a key of the last section
		{"venom.maxFileBytes", "1000"}, // again
		{"venom.keep", "4"},            // a key it has: git
		{"core.excludesFile", "/x/ignore"},
		{"user.useConfigOnly", "true"}, // a section before the last: git
		{"venom.enabled", "false"},     // a section before the last: git
		{"filter.upper.clean", "tr a-z A-Z"},
		{"gpg.program", "false"},
		{"gpg.Program", "true"}, // the same key in another case: git
		{"commit.gpgsign", "true"},
	} {
		before := plain
		if setConfigPlain(filepath.Join(mine.Home, ".gitconfig"), kv[0], kv[1]) {
			plain++
		} else {
			mine.Git("config", "--global", kv[0], kv[1])
		}
		gits.Git("config", "--global", kv[0], kv[1])
		require.Equal(t, gits.Read("../home/.gitconfig"), mine.Read("../home/.gitconfig"),
			"after %s=%s (written here: %v)", kv[0], kv[1], plain > before)
	}
	assert.Equal(t, 6, plain, "the writes SetGlobal is sure of")
}
