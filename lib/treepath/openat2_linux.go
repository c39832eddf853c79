package treepath

import "golang.org/x/sys/unix"

// openat2Beneath opens the folder dir beneath the folder at fd, failing on
// any link on the way (RESOLVE_NO_SYMLINKS) and on any step out of it
// (RESOLVE_BENEATH), in one call.
func openat2Beneath(fd int, dir string) (int, error) {
	return unix.Openat2(fd, dir, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}
