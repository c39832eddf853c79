package packfile

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

func objectID(typ string, data []byte) [20]byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	var id [20]byte
	copy(id[:], h.Sum(nil))
	return id
}

// git itself must read the pack back: verify-pack checks the index, the
// entries' CRCs and the checksums; fsck and cat-file every object. An
// uncounted pack (CreateUncounted) gets its count and checksum at Seal;
// objects of random bytes are stored, not deflated (Incompressible).
func TestWriter_GitReadsThePack(t *testing.T) {
	t.Run("counted", func(t *testing.T) { gitReadsThePack(t, false) })
	t.Run("uncounted", func(t *testing.T) { gitReadsThePack(t, true) })
}

func gitReadsThePack(t *testing.T, uncounted bool) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	packDir := filepath.Join(dir, ".git", "objects", "pack")

	rng := rand.New(rand.NewSource(1))
	blobs := map[string][]byte{}
	var treeBody []byte
	for i := 0; i < 300; i++ {
		// Sizes around the header's 4- and 7-bit steps, empty included.
		size := []int{0, 1, 15, 16, 17, 127, 128, 2047, 2048, 100000}[i%10] + i/10
		data := make([]byte, size)
		if i%3 == 0 {
			rng.Read(data) // all noise
		} else {
			rng.Read(data[:size/2]) // half noise, half zeros
		}
		id := objectID("blob", data)
		blobs[hex.EncodeToString(id[:])] = data
		treeBody = append(treeBody, fmt.Sprintf("100644 f%03d\x00", i)...)
		treeBody = append(treeBody, id[:]...)
	}
	create := func() (*Writer, error) { return Create(packDir, len(blobs)+1) }
	if uncounted {
		create = func() (*Writer, error) { return CreateUncounted(packDir, Options{}) }
	}
	w, err := create()
	require.NoError(t, err)
	for hexID, data := range blobs {
		var id [20]byte
		b, _ := hex.DecodeString(hexID)
		copy(id[:], b)
		require.NoError(t, w.Add(id, Blob, data))
	}
	treeID := objectID("tree", treeBody)
	require.NoError(t, w.Add(treeID, Tree, treeBody))
	name, err := w.Finish()
	require.NoError(t, err)
	require.Equal(t, len(blobs)+1, w.Count())

	out := gittest.Run(t, dir, "", nil, "verify-pack", "-v", filepath.Join(packDir, name+".idx"))
	require.Contains(t, out, fmt.Sprintf("non delta: %d objects", len(blobs)+1))
	gittest.Run(t, dir, "", nil, "fsck", "--strict", "--no-dangling")
	tree := hex.EncodeToString(treeID[:])
	require.Equal(t, "tree", gittest.Run(t, dir, "", nil, "cat-file", "-t", tree))
	require.Equal(t, 300, len(strings.Split(gittest.Run(t, dir, "", nil, "ls-tree", tree), "\n")))
	// One cat-file for all the blobs: a line "<id> blob <size>" each.
	ids := make([]string, 0, len(blobs))
	for hexID := range blobs {
		ids = append(ids, hexID)
	}
	sizes := strings.Split(gittest.Run(t, dir, strings.Join(ids, "\n")+"\n", nil, "cat-file", "--batch-check"), "\n")
	require.Len(t, sizes, len(ids))
	for i, hexID := range ids {
		require.Equal(t, fmt.Sprintf("%s blob %d", hexID, len(blobs[hexID])), sizes[i])
	}
	// No temporary file is left, and the two files are read-only as git's.
	entries, err := os.ReadDir(packDir)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	fi, err := os.Stat(filepath.Join(packDir, name+".pack"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o444), fi.Mode().Perm())
}

// A pack that does not get the objects it was made for leaves nothing.
func TestWriter_ShortPackLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, 2)
	require.NoError(t, err)
	data := []byte("one\n")
	require.NoError(t, w.Add(objectID("blob", data), Blob, data))
	_, err = w.Finish()
	require.Error(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// Objects on both sides of the stored-block threshold (storedBelow) read
// back byte for byte through git (verify-pack, fsck --strict, cat-file)
// and through libgit2.
func TestWriter_StoredBlocksReadBack(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	rng := rand.New(rand.NewSource(2))
	blobs := map[[20]byte][]byte{}
	for _, size := range []int{0, 1, storedBelow - 1, storedBelow, storedBelow + 1, 70000} {
		for _, noise := range []bool{false, true} {
			data := bytes.Repeat([]byte{'x'}, size)
			if noise {
				rng.Read(data)
			}
			blobs[objectID("blob", data)] = data
		}
	}
	w, err := Create(packDir, len(blobs))
	require.NoError(t, err)
	for id, data := range blobs {
		require.NoError(t, w.Add(id, Blob, data))
	}
	name, err := w.Finish()
	require.NoError(t, err)
	out := gittest.Run(t, dir, "", nil, "verify-pack", "-v", filepath.Join(packDir, name+".idx"))
	require.Contains(t, out, fmt.Sprintf("non delta: %d objects", len(blobs)))
	gittest.Run(t, dir, "", nil, "fsck", "--strict", "--no-dangling")
	repo, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer repo.Free()
	odb, err := repo.Odb()
	require.NoError(t, err)
	defer odb.Free()
	var hexIDs []string
	var datas [][]byte
	for id, data := range blobs {
		hexIDs, datas = append(hexIDs, hex.EncodeToString(id[:])), append(datas, data)
	}
	for i, got := range gittest.Blobs(t, dir, nil, hexIDs...) {
		require.Equal(t, datas[i], got, "git reads %d bytes back", len(datas[i]))
	}
	for id, data := range blobs {
		obj, err := odb.Read((*git.Oid)(&id))
		require.NoError(t, err)
		require.Equal(t, data, append([]byte{}, obj.Data()...), "libgit2 reads %d bytes back", len(data))
		obj.Free()
	}
}

func TestIncompressible(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	noise := make([]byte, 50<<10)
	rng.Read(noise)
	require.True(t, Incompressible(noise))
	text := []byte(strings.Repeat("func main() { fmt.Println(\"hello, world\") }\n", 2000))
	require.False(t, Incompressible(text))
	require.False(t, Incompressible(noise[:100]), "too short to judge: deflated")
}

// TestWriter_SaltMakesANewName: a pack is named by its bytes, so one of
// the same objects has the name of the earlier one; salted, it has one
// of its own (Exists says which), and git reads each of them.
func TestWriter_SaltMakesANewName(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, exec.Command("git", "init", "-q", dir).Run())
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	data := []byte("one small blob\n")
	id := objectID("blob", data)
	names := map[string]bool{}
	for salt := 0; salt < 4; salt++ {
		for again := 0; again < 2; again++ {
			w, err := CreateWith(packDir, 1, Options{Salt: salt})
			require.NoError(t, err)
			require.NoError(t, w.Add(id, Blob, data))
			name, err := w.Seal()
			require.NoError(t, err)
			if again == 1 {
				require.True(t, w.Exists(), "the same bytes, the same name")
				w.Discard()
				continue
			}
			require.False(t, names[name], "salt %d gave a name already made", salt)
			require.False(t, w.Exists())
			names[name] = true
			require.NoError(t, w.Install())
			out, err := exec.Command("git", "-C", dir, "verify-pack", filepath.Join(packDir, name+".idx")).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "cat-file", "-p", fmt.Sprintf("%x", id)).Output()
	require.NoError(t, err)
	require.Equal(t, string(data), string(out))
}

// Objects added as streams (AddStream), salted or not, beside whole ones,
// read back byte for byte through git; a stream shorter or longer than
// its size fails.
func TestWriter_StreamedObjectsReadBack(t *testing.T) {
	for _, salt := range []int{0, 2} {
		t.Run(fmt.Sprint("salt ", salt), func(t *testing.T) {
			dir := t.TempDir()
			gittest.Run(t, dir, "", nil, "init", "-q")
			packDir := filepath.Join(dir, ".git", "objects", "pack")
			rng := rand.New(rand.NewSource(3))
			var objs [][]byte
			for _, size := range []int{0, 1, storedBelow, 5000, 300000} {
				for _, noise := range []bool{false, true} {
					data := bytes.Repeat([]byte("a line of text\n"), size/15+1)[:size]
					if noise && size == 0 {
						continue // the same object
					}
					if noise {
						rng.Read(data)
					}
					objs = append(objs, data)
				}
			}
			w, err := CreateWith(packDir, len(objs)+1, Options{Salt: salt})
			require.NoError(t, err)
			for _, data := range objs {
				require.NoError(t, w.AddStream(objectID("blob", data), Blob, int64(len(data)), bytes.NewReader(data)))
			}
			whole := []byte("added whole\n")
			require.NoError(t, w.Add(objectID("blob", whole), Blob, whole))
			name, err := w.Finish()
			require.NoError(t, err)
			out := gittest.Run(t, dir, "", nil, "verify-pack", "-v", filepath.Join(packDir, name+".idx"))
			require.Contains(t, out, fmt.Sprintf("non delta: %d objects", len(objs)+1))
			gittest.Run(t, dir, "", nil, "fsck", "--strict", "--no-dangling")
			all := append(objs, whole)
			var ids []string
			for _, data := range all {
				id := objectID("blob", data)
				ids = append(ids, hex.EncodeToString(id[:]))
			}
			for i, got := range gittest.Blobs(t, dir, nil, ids...) {
				require.True(t, bytes.Equal(all[i], got), "%d bytes", len(all[i]))
			}
		})
	}
	w, err := Create(t.TempDir(), 1)
	require.NoError(t, err)
	require.Error(t, w.AddStream(objectID("blob", []byte("x")), Blob, 2, strings.NewReader("x")))
	w.Abort()
	w, err = Create(t.TempDir(), 1)
	require.NoError(t, err)
	require.Error(t, w.AddStream(objectID("blob", []byte("x")), Blob, 1, strings.NewReader("xy")))
	w.Abort()
}
