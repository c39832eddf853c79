package treeedit

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// TestApply_RandomAgainstGit applies random edits (names that sort
// differently as folders, bytes >= 0x80, every mode, file/folder swaps,
// folders emptied, deep paths) to random trees and checks each result
// against the tree git writes from an index of the same files, and the
// repository with git fsck --strict.
func TestApply_RandomAgainstGit(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	var blobs []string
	for i := 0; i < 3; i++ {
		blobs = append(blobs, gittest.Run(t, dir, fmt.Sprintf("blob %d\n", i), nil, "hash-object", "-w", "--stdin"))
	}
	names := []string{"a", "a.b", "a-b", "a0", "a_", "b", "\xc3\xa9", "\xff\xfe", "A", "z~1", "x y"}
	modes := []uint32{0o100644, 0o100755, 0o120000, 0o160000}
	rng := rand.New(rand.NewSource(1))
	randPath := func() string {
		n := 1 + rng.Intn(4)
		if rng.Intn(20) == 0 {
			n = 40 // deep
		}
		parts := make([]string, n)
		for i := range parts {
			parts[i] = names[rng.Intn(len(names))]
		}
		return strings.Join(parts, "/")
	}
	type file struct {
		mode uint32
		oid  string
	}
	// set puts f at p in the flat listing, dropping what was in the way.
	set := func(m map[string]file, p string, f *file) {
		for q := range m {
			if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
				delete(m, q)
			}
		}
		if f != nil {
			m[p] = *f
		}
	}
	// listing is the index lines of m, for gitsTrees.
	listing := func(m map[string]file) string {
		var info strings.Builder
		for p, f := range m {
			fmt.Fprintf(&info, "%o %s\t%s\x00", f.mode, f.oid, p)
		}
		return info.String()
	}
	repo, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer repo.Free()
	// Every round is drawn first, then git writes each round's base and
	// edited trees at once (gitsTrees), then Apply edits each base.
	const rounds = 40
	var infos []string
	roundEdits := make([][]Edit, rounds)
	for round := 0; round < rounds; round++ {
		files := map[string]file{}
		for i := 0; i < 1+rng.Intn(30); i++ {
			set(files, randPath(), &file{modes[rng.Intn(len(modes))], blobs[rng.Intn(len(blobs))]})
		}
		infos = append(infos, listing(files))
		var edits []Edit
		var existing []string
		for p := range files {
			existing = append(existing, p)
		}
		sort.Strings(existing)
		for i := 0; i < 1+rng.Intn(12); i++ {
			var p string
			switch rng.Intn(3) {
			case 0:
				p = randPath()
			default:
				if len(existing) == 0 {
					continue
				}
				p = existing[rng.Intn(len(existing))]
				if rng.Intn(3) == 0 && strings.Contains(p, "/") {
					p = p[:strings.LastIndexByte(p, '/')] // a folder
				}
			}
			// One edit a path, none inside another's folder: Apply's
			// answer to both at once is its own rule.
			clash := false
			for _, e := range edits {
				clash = clash || e.Path == p || strings.HasPrefix(e.Path, p+"/") || strings.HasPrefix(p, e.Path+"/")
			}
			if clash {
				continue
			}
			if rng.Intn(3) == 0 {
				edits = append(edits, Edit{Path: p})
				set(files, p, nil)
			} else {
				f := file{modes[rng.Intn(len(modes))], blobs[rng.Intn(len(blobs))]}
				edits = append(edits, Edit{Path: p, Mode: f.mode, Oid: f.oid})
				set(files, p, &f)
			}
		}
		roundEdits[round] = edits
		infos = append(infos, listing(files))
	}
	trees := gitsTrees(t, dir, infos)
	for round, edits := range roundEdits {
		baseID, err := git.NewOid(trees[2*round])
		require.NoError(t, err)
		got, err := Apply(repo, baseID, edits)
		require.NoError(t, err)
		require.Equal(t, trees[2*round+1], got.String(), "round %d: %q", round, edits)
	}
	gittest.Run(t, dir, "", nil, "fsck", "--strict", "--no-dangling")
}

// TestApply_MassRemovalAgainstGit removes, file by file, every file of
// some folders (whole subtrees, nested ones, the whole tree), some files
// of others, with a few files set among them, given in path order (as a
// capture's removals come, taken as they are) and shuffled, and checks
// each result against the tree git writes after update-index of the same
// paths, and the repository with git fsck --strict.
func TestApply_MassRemovalAgainstGit(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	blob := gittest.Run(t, dir, "blob\n", nil, "hash-object", "-w", "--stdin")
	raw, err := git.NewOid(blob)
	require.NoError(t, err)
	names := []string{"a", "a.b", "a-b", "a0", "b", "\xc3\xa9", "z"}
	rng := rand.New(rand.NewSource(2))
	repo, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer repo.Free()
	// Every round is drawn first, then git writes each round's base and
	// edited trees at once (gitsTrees), then Apply edits each base.
	type drawn struct {
		prefixes        []string
		edits, shuffled []Edit
	}
	var rounds []drawn
	var infos []string
	for round := 0; round < 30; round++ {
		// Files at depth 1 to 4; a name is a file or a folder, not both.
		files := map[string]bool{}
		for i := 0; i < 20+rng.Intn(200); i++ {
			n := 1 + rng.Intn(4)
			parts := make([]string, n)
			for k := range parts {
				parts[k] = names[rng.Intn(len(names))]
			}
			parts[n-1] += ".f"
			files[strings.Join(parts, "/")] = true
		}
		var all []string
		var base strings.Builder
		for p := range files {
			all = append(all, p)
			fmt.Fprintf(&base, "100644 %s\t%s\x00", blob, p)
		}
		sort.Strings(all)
		// Gone: the files under a few prefixes (a folder's every file,
		// "" the whole tree), and single files at random.
		var prefixes []string
		for k := rng.Intn(4); k > 0; k-- {
			p := all[rng.Intn(len(all))]
			for d := rng.Intn(3); d > 0 && strings.Contains(p, "/"); d-- {
				p = p[:strings.LastIndexByte(p, '/')]
			}
			prefixes = append(prefixes, p[:strings.LastIndexByte(p, '/')+1])
		}
		if rng.Intn(10) == 0 {
			prefixes = append(prefixes, "")
		}
		var edits []Edit
		var info strings.Builder
		for _, p := range all {
			gone := rng.Intn(8) == 0
			for _, pre := range prefixes {
				gone = gone || strings.HasPrefix(p, pre)
			}
			switch {
			case gone:
				edits = append(edits, Edit{Path: p})
				fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), p)
			case rng.Intn(20) == 0:
				edits = append(edits, Edit{Path: p, Mode: 0o100755, ID: *raw})
				fmt.Fprintf(&info, "100755 %s\t%s\x00", blob, p)
			}
		}
		// A new file in a folder emptied, now and then.
		if len(prefixes) > 0 && rng.Intn(3) == 0 {
			p := prefixes[0] + "new.f"
			if !files[p] {
				edits = append(edits, Edit{Path: p, Mode: 0o100644, ID: *raw})
				fmt.Fprintf(&info, "100644 %s\t%s\x00", blob, p)
				sort.Slice(edits, func(i, j int) bool { return edits[i].Path < edits[j].Path })
			}
		}
		// The edited tree: info on the base's index, as update-index
		// applies it to the index of the base.
		infos = append(infos, base.String(), base.String()+info.String())
		shuffled := slices.Clone(edits)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		rounds = append(rounds, drawn{prefixes, edits, shuffled})
	}
	trees := gitsTrees(t, dir, infos)
	for round, d := range rounds {
		want := trees[2*round+1]
		baseID, err := git.NewOid(trees[2*round])
		require.NoError(t, err)
		got, err := Apply(repo, baseID, d.edits)
		require.NoError(t, err)
		require.Equal(t, want, got.String(), "round %d, in path order: gone %q", round, d.prefixes)
		got, err = Apply(repo, baseID, d.shuffled)
		require.NoError(t, err)
		require.Equal(t, want, got.String(), "round %d, shuffled: gone %q", round, d.prefixes)
	}
	gittest.Run(t, dir, "", nil, "fsck", "--strict", "--no-dangling")
}
