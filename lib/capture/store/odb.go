package store

/*
#include <stdlib.h>
#include <string.h>
#include <git2.h>

// A missing object makes libgit2 read the pack folder again before it
// answers (git_odb_exists refreshes on a miss), and a capture asks about
// every object it makes, nearly all of them new: with a pack per capture
// in the folder that was a dozen milliseconds of readdir per capture.
static int venom_odb_has(git_odb *db, const unsigned char *id) {
	git_oid oid;
	memcpy(oid.id, id, GIT_OID_RAWSZ);
	return git_odb_exists_ext(db, &oid, GIT_ODB_LOOKUP_NO_REFRESH);
}

static int venom_strict_object_creation(int on) {
	return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, on);
}
*/
import "C"

import (
	"errors"
	"unsafe"

	git "github.com/libgit2/git2go/v34"
)

func init() {
	// libgit2 checks, for every entry a tree builder inserts, that its
	// object is in the builder's repository. A capture builds its trees in
	// an object database that holds only its new objects (so that writing
	// them costs no look-up on disk), while a few of its blobs (large or
	// filtered files) are written by git hash-object to the disk. Every
	// object a capture's tree or commit names is one it just wrote or one
	// read from the repository, so the check would only cost.
	C.venom_strict_object_creation(0)
}

// diskObjects answers whether the repository holds an object, from the
// packs and loose objects there were when it was opened.
type diskObjects struct{ db *C.git_odb }

func openDiskObjects(objectsDir string) (*diskObjects, error) {
	dir := C.CString(objectsDir)
	defer C.free(unsafe.Pointer(dir))
	var db *C.git_odb
	if C.git_odb_open(&db, dir) != 0 {
		return nil, errors.New("cannot open the object database")
	}
	return &diskObjects{db: db}, nil
}

// has reports whether the object is there. A pack another process wrote
// since the open is not seen: the object is then packed again, which git
// allows.
func (d *diskObjects) has(id *git.Oid) bool {
	return C.venom_odb_has(d.db, (*C.uchar)(unsafe.Pointer(&id[0]))) == 1
}

func (d *diskObjects) close() { C.git_odb_free(d.db) }
