//go:build linux && (amd64 || arm64)

package scan

import (
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/testhook"
)

// A steady capture of a tree of 300,000 files is one lstat per file, and
// on a kernel that isolates its page tables (PTI, as on this project's
// VMs) each system call costs about 1.2 µs of a 3.8 µs fstatat just to
// enter and leave the kernel. io_uring takes a batch of statx calls in
// one entry: measured on the 300,000-file tree, 2.1-2.9 µs of CPU a
// file against 3.8-3.9 µs (io-wq's worker threads included, as they are
// the process's). The kernel may refuse it (older than 5.6, io_uring
// disabled by sysctl or a seccomp filter): the capture then stats as
// before, and so it does for any path whose answer is not a plain success
// or "gone": the ring's answers are never trusted further than fstatat's.
//
// It is off unless VENOM_TEST_URING is set. Measured again on a quiet
// machine (one bench run each way, alternated twice, same tree), the ring
// saved no CPU and cost wall time: a steady capture of 300,000 untracked
// files took 1.18-1.37x git status -uall's wall with it and 0.95-1.10x
// without; a capture with 20 changes 1.44-1.67x against 0.97-1.12x. Every
// statx is handed to io-wq's worker threads and a batch waits for its
// slowest call; the earlier gain was measured at load 5-10. It stays, tested,
// to be measured on other machines (tests/bench -shapes untracked).

const (
	sysIOUringSetup    = 425 // the same number on amd64 and arm64
	sysIOUringEnter    = 426
	sysIOUringRegister = 427
	opStatx            = 21 // IORING_OP_STATX
	enterGetEvents     = 1  // IORING_ENTER_GETEVENTS
	offSQRing          = 0
	offSQEs            = 0x10000000
	featSingleMmap     = 1 // IORING_FEAT_SINGLE_MMAP
	// ringEntries is the batch submitted at once.
	ringEntries = 1024
	// statxFlags are fstatat's as the kernel makes them: no last link
	// followed, and no automount point mounted (vfs_fstatat adds
	// AT_NO_AUTOMOUNT; statx would otherwise mount it and answer for
	// the mounted folder).
	statxFlags = unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT
	// statxMask asks for what Stat keeps.
	statxMask = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME |
		unix.STATX_UID | unix.STATX_GID
)

type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sq                                                                     struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cq struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

type ringSQE struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64 // addr2: the statx buffer
	addr     uint64 // the path
	len      uint32 // the statx mask
	opFlags  uint32 // statx flags
	userData uint64
	_        [3]uint64
}

type ringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// statRing is one io_uring for batches of statx calls.
type statRing struct {
	fd                     int
	ring, sqes             []byte
	p                      ringParams
	bufs                   []unix.Statx_t
	names                  []byte // the batch's names, NUL-terminated
	sqTail, cqHead, cqTail *uint32
	sqMask, cqMask         uint32
}

var (
	ringMu   sync.Mutex
	ringOnce sync.Once
	theRing  *statRing // nil when the kernel refused one
	// deadRings are rings that failed with calls perhaps still under way:
	// their buffers stay, for the kernel to write into.
	deadRings []*statRing
)

// dropRing stops using the ring after a failure.
func dropRing() {
	deadRings = append(deadRings, theRing)
	theRing = nil
}

// sharedRing is the process's ring, made on first use; nil when io_uring
// is not to be had, or not asked for (VENOM_TEST_URING unset: see above).
func sharedRing() *statRing {
	ringOnce.Do(func() {
		if testhook.Int("VENOM_TEST_URING") == 0 || unsafe.Sizeof(unix.Statx_t{}) < 256 {
			return
		}
		theRing, _ = newStatRing()
	})
	return theRing
}

func newStatRing() (*statRing, error) {
	r := &statRing{}
	fd, _, errno := syscall.Syscall(sysIOUringSetup, ringEntries, uintptr(unsafe.Pointer(&r.p)), 0)
	if errno != 0 {
		return nil, errno
	}
	r.fd = int(fd)
	fail := func(err error) (*statRing, error) {
		r.close()
		return nil, err
	}
	if r.p.features&featSingleMmap == 0 || r.p.sqEntries < ringEntries || r.p.cqEntries < ringEntries || !r.hasStatx() {
		return fail(syscall.ENOSYS)
	}
	size := max(int(r.p.sq.array)+int(r.p.sqEntries)*4, int(r.p.cq.cqes)+int(r.p.cqEntries)*int(unsafe.Sizeof(ringCQE{})))
	var err error
	if r.ring, err = unix.Mmap(r.fd, offSQRing, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fail(err)
	}
	if r.sqes, err = unix.Mmap(r.fd, offSQEs, int(r.p.sqEntries)*int(unsafe.Sizeof(ringSQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fail(err)
	}
	r.sqTail, r.sqMask = r.u32(r.p.sq.tail), *r.u32(r.p.sq.ringMask)
	r.cqHead, r.cqTail, r.cqMask = r.u32(r.p.cq.head), r.u32(r.p.cq.tail), *r.u32(r.p.cq.ringMask)
	r.bufs = make([]unix.Statx_t, ringEntries)
	r.names = make([]byte, 0, 64*ringEntries)
	return r, nil
}

// hasStatx asks the kernel whether its rings take statx (5.6 on): an
// older one refuses each entry as it reads it, which would cost a system
// call a file.
func (r *statRing) hasStatx() bool {
	const registerProbe, opSupported = 8, 1 // IORING_REGISTER_PROBE, IO_URING_OP_SUPPORTED
	var probe struct {
		lastOp, opsLen uint8
		_              uint16
		_              [3]uint32
		ops            [256]struct {
			op, _ uint8
			flags uint16
			_     uint32
		}
	}
	_, _, errno := syscall.Syscall6(sysIOUringRegister, uintptr(r.fd), registerProbe, uintptr(unsafe.Pointer(&probe)), 256, 0, 0)
	return errno == 0 && probe.lastOp >= opStatx && probe.ops[opStatx].flags&opSupported != 0
}

func (r *statRing) u32(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&r.ring[off])) }

func (r *statRing) close() {
	if r.sqes != nil {
		unix.Munmap(r.sqes)
	}
	if r.ring != nil {
		unix.Munmap(r.ring)
	}
	syscall.Close(r.fd)
}

// ringJob is one statx of a batch: name in the folder open as dir.
type ringJob struct {
	dir  int
	name int // offset of the NUL-terminated name in the batch's names
	i    int // index in the caller's list
}

// run stats a batch of at most ringEntries jobs, names holding their
// names, and calls done for each with its statx buffer or errno. false:
// the ring failed as a whole (nothing was called), and is not to be used
// again.
func (r *statRing) run(jobs []ringJob, names []byte, done func(i int, sx *unix.Statx_t, errno syscall.Errno)) bool {
	tail := atomic.LoadUint32(r.sqTail)
	for k, j := range jobs {
		idx := (tail + uint32(k)) & r.sqMask
		sqe := (*ringSQE)(unsafe.Pointer(&r.sqes[uintptr(idx)*unsafe.Sizeof(ringSQE{})]))
		*sqe = ringSQE{opcode: opStatx, fd: int32(j.dir), addr: uint64(uintptr(unsafe.Pointer(&names[j.name]))),
			len: statxMask, opFlags: statxFlags, off: uint64(uintptr(unsafe.Pointer(&r.bufs[k]))), userData: uint64(k)}
		*r.u32(r.p.sq.array + 4*idx) = idx
	}
	atomic.StoreUint32(r.sqTail, tail+uint32(len(jobs)))
	// The kernel may take fewer entries than offered: it stops at one it
	// refuses as it takes it in (a name longer than PATH_MAX, an opcode
	// it lacks), completing that one with the error, and returns without
	// waiting. The rest are offered again, so every entry is submitted
	// and waited for exactly once.
	submitted, seen := 0, 0
	for seen < len(jobs) {
		offer := len(jobs) - submitted
		n, _, errno := syscall.Syscall6(sysIOUringEnter, uintptr(r.fd), uintptr(offer),
			uintptr(len(jobs)-seen), enterGetEvents, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 || (offer > 0 && n == 0) {
			// What was submitted may still complete into the buffers:
			// the ring is dropped for good, its memory kept alive.
			return false
		}
		submitted += min(int(n), offer)
		head, end := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
		for ; head != end; head++ {
			cqe := (*ringCQE)(unsafe.Pointer(&r.ring[uintptr(r.p.cq.cqes)+uintptr(head&r.cqMask)*unsafe.Sizeof(ringCQE{})]))
			k := int(cqe.userData)
			if cqe.res < 0 {
				done(jobs[k].i, nil, syscall.Errno(-cqe.res))
			} else {
				done(jobs[k].i, &r.bufs[k], 0)
			}
			seen++
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return true
}

// ringStat lstats n paths (path(i)) through the ring, each in its folder
// reached as folderAt reaches it, and gives each to done with its stat
// data (the fields a capture compares: mode, size, times, inode, device,
// owner) or its error; false when there is no ring (nothing given). A
// path the ring could not answer plainly is stat'ed by folderAt, as
// without the ring. Paths of one folder come together for one open.
func ringStat(top string, base, n int, path func(int) string, done func(i int, st *syscall.Stat_t, err error)) bool {
	ringMu.Lock()
	defer ringMu.Unlock()
	r := sharedRing()
	if r == nil || base < 0 {
		return false
	}
	jobs := make([]ringJob, 0, ringEntries)
	names := r.names[:0]
	var open []int // the folders the batch's jobs use
	dir := folderAt{top: top, base: base, fd: -1}
	var again []int // paths to stat as without the ring
	var st syscall.Stat_t
	flush := func() bool {
		ok := r.run(jobs, names, func(i int, sx *unix.Statx_t, errno syscall.Errno) {
			switch {
			case errno == 0 && sx.Mask&statxMask == statxMask:
				st = syscall.Stat_t{Mode: uint32(sx.Mode), Size: int64(sx.Size), Ino: sx.Ino, Uid: sx.Uid, Gid: sx.Gid,
					Dev:  unix.Mkdev(sx.Dev_major, sx.Dev_minor),
					Mtim: syscall.Timespec{Sec: sx.Mtime.Sec, Nsec: int64(sx.Mtime.Nsec)},
					Ctim: syscall.Timespec{Sec: sx.Ctime.Sec, Nsec: int64(sx.Ctime.Nsec)}}
				done(i, &st, nil)
			case errno == syscall.ENOENT || errno == syscall.ENOTDIR:
				done(i, nil, errno)
			default:
				again = append(again, i)
			}
		})
		for _, fd := range open {
			syscall.Close(fd)
		}
		r.names = names // grown: kept with the ring, which the kernel may write
		jobs, names, open = jobs[:0], names[:0], open[:0]
		return ok
	}
	for i := 0; i < n; i++ {
		p := path(i)
		cut := strings.LastIndexByte(p, '/')
		if parent := p[:max(cut, 0)]; !dir.done || dir.path != parent {
			// The folder stays open for the batch: a job holds its fd.
			dir.fd = -1
			dir.open(parent)
			if dir.fd >= 0 && dir.fd != base {
				open = append(open, dir.fd)
			}
		}
		if dir.fd < 0 {
			again = append(again, i) // gone, or not to be opened: folderAt's way
			continue
		}
		jobs = append(jobs, ringJob{dir: dir.fd, name: len(names), i: i})
		names = append(append(names, p[cut+1:]...), 0)
		if len(jobs) == ringEntries {
			if !flush() {
				dropRing()
				return false
			}
			dir.done = false // its fd was closed with the batch
		}
	}
	if len(jobs) > 0 && !flush() {
		dropRing()
		return false
	}
	// The rest as without the ring.
	dir = folderAt{top: top, base: base, fd: -1}
	defer dir.close()
	var name []byte
	for _, i := range again {
		p := path(i)
		cut := strings.LastIndexByte(p, '/')
		name = append(append(name[:0], p[cut+1:]...), 0)
		if err := dir.lstat(p[:max(cut, 0)], name, &st); err != nil {
			done(i, nil, err)
		} else {
			done(i, &st, nil)
		}
	}
	return true
}
