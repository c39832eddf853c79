package store

import (
	"context"
	"crypto/sha1"
	"path/filepath"
	"runtime"
	"sync"

	git "github.com/libgit2/git2go/v34"
	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/testhook"
)

// A capture of many new files is mostly reading, hashing and compressing
// them. Up to memoryBudget their blobs are held in memory for the one pack
// the checkpoint's commit joins (Snapshot.Store); past it they are
// compressed as they are read and streamed into a pack of their own (the
// spill), instead of one git hash-object each, which had 477 MiB of new
// files take minutes. Both are read, hashed and compressed on every core
// (readQuiet), each file once.

// sink takes the blobs a capture read: held while the budget lasts, then
// spilled. Safe for the readers' goroutines.
type sink struct {
	h        *holder
	packDir  string
	budget   int64      // memoryBudget
	mu       sync.Mutex // h, inMemory, spilled
	inMemory int64
	spilled  map[git.Oid]bool
	wmu      sync.Mutex // spill
	spill    *packfile.Writer
	syncs    bool // the spill is synced as git syncs a pack it writes
}

func newSink(r *repo.Repo, h *holder) *sink {
	s := &sink{h: h, packDir: filepath.Join(r.CommonDir, "objects", "pack"), spilled: map[git.Oid]bool{}, budget: memoryBudget,
		syncs: r.Syncs(repo.FsyncPack)}
	// Tests spill a few files instead of 64 MiB of them.
	if n := testhook.Int("VENOM_TEST_MEMORY_BUDGET"); n > 0 {
		s.budget = int64(n)
	}
	return s
}

// put stores the blob id of data, compressing with c when it spills.
func (s *sink) put(id git.Oid, data []byte, c *packfile.Compressor) error {
	s.mu.Lock()
	if s.inMemory+int64(len(data)) <= s.budget {
		s.h.add(id, packfile.Blob, s.h.keep(data))
		s.inMemory += int64(len(data))
		s.mu.Unlock()
		return nil
	}
	// Two files of one content are one object: a pack lists each once.
	if s.spilled[id] {
		s.mu.Unlock()
		return nil
	}
	s.spilled[id] = true
	s.mu.Unlock()
	entry, crc, err := c.Entry(packfile.Blob, data)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.spill == nil {
		if s.spill, err = packfile.CreateUncounted(s.packDir, packfile.Options{Sync: s.syncs}); err != nil {
			return err
		}
	}
	return s.spill.AddRaw(id, entry, crc)
}

// finish installs the spill, held and recorded as any pack a capture
// writes (installPack), and returns the ids it holds. Every blob spilled
// is written there, one the repository held already too: the checkpoint
// relies on the pack this command holds, never on another.
func (s *sink) finish(r *repo.Repo) ([]git.Oid, error) {
	w := s.spill
	s.spill = nil
	if w == nil {
		return nil, nil
	}
	if _, err := w.Seal(); err != nil {
		return nil, err
	}
	if err := installPack(r, w); err != nil {
		return nil, err
	}
	ids := make([]git.Oid, 0, len(s.spilled))
	for id := range s.spilled {
		ids = append(ids, id)
	}
	return ids, nil
}

// abort removes an unfinished spill.
func (s *sink) abort() {
	if s.spill != nil {
		s.spill.Abort()
		s.spill = nil
	}
}

// quietRead is what reading one file whose blob is its bytes gave.
type quietRead uint8

const (
	readStored quietRead = iota // its blob is stored (held or spilled)
	readHasCR                   // it holds a CR: git decides its blob
	readLarge                   // past MemoryFileBytes: git stores it, streamed
)

// manyFiles: a capture storing at least this many files decides up front
// which may hold a CR as they are (one git config call), so that its
// readers store them at the first read.
const manyFiles = 256

// readQuiet reads, hashes and stores the files of idx (indexes into
// files, in path order), setting ids; it returns what each gave, in idx's
// order. A file holding a CR is stored only where crOK (nil: none) says
// line endings cannot change it. Runs of consecutive files go to one
// reader each, so that a folder's files stay with the reader that opened
// the folder.
func readQuiet(ctx context.Context, top string, files []File, idx []int, crOK []bool, ids []git.Oid, s *sink) ([]quietRead, error) {
	out := make([]quietRead, len(idx))
	workers := min(runtime.GOMAXPROCS(0), 4, (len(idx)+63)/64)
	if workers < 1 {
		return out, nil
	}
	const run = 64
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	take := func() (int, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= len(idx) {
			return 0, 0, false
		}
		start := next
		next = min(next+run, len(idx))
		return start, next, true
	}
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tree, err := openBeneath(top)
			if err != nil {
				fail(err)
				return
			}
			defer tree.close()
			sum, c := sha1.New(), packfile.NewCompressor()
			var buf []byte
			whole := func(size int64) bool { return size <= MemoryFileBytes }
			for {
				start, end, ok := take()
				if !ok {
					return
				}
				if ctx.Err() != nil {
					fail(context.Cause(ctx)) // the signal, if one stopped it
					return
				}
				for k := start; k < end; k++ {
					i := idx[k]
					fd, size, err := tree.openRegular(files[i].Path)
					if err != nil {
						fail(ErrNoTreePath)
						return
					}
					var raw rawBlob
					raw, buf, err = readBlob(fd, size, files[i].Path, whole, sum, buf)
					unix.Close(fd)
					if err != nil {
						fail(ErrNoTreePath)
						return
					}
					switch {
					case raw.hasCR && (crOK == nil || !crOK[k]):
						out[k] = readHasCR
					case raw.data == nil:
						out[k] = readLarge
					default:
						if err := s.put(raw.id, raw.data, c); err != nil {
							fail(err)
							return
						}
						ids[i] = raw.id
					}
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}
