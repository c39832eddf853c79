package tests

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// setDefaultACL gives the folder dir the default ACL u::rwx g::r-x o::---
// (the xattr setfacl -d writes): a file made in it takes its mode from
// the ACL, not from the umask.
func setDefaultACL(t *testing.T, dir string) {
	t.Helper()
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range [][2]uint16{{0x01, 7}, {0x04, 5}, {0x20, 0}} {
		b = binary.LittleEndian.AppendUint16(b, e[0])
		b = binary.LittleEndian.AppendUint16(b, e[1])
		b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	}
	if err := unix.Setxattr(dir, "system.posix_acl_default", b, 0); err != nil {
		t.Skipf("no POSIX ACLs here: %v", err)
	}
}

// checkoutModeOf is what git's checkout decides of a file or folder: its kind and
// permission bits, its group, and its ACLs.
func checkoutModeOf(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	s := fmt.Sprintf("%o gid %d", st.Mode, st.Gid)
	for _, attr := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
		buf := make([]byte, 256)
		if n, err := unix.Lgetxattr(p, attr, buf); err == nil {
			s += fmt.Sprintf(" %s=%x", attr, buf[:n])
		}
	}
	return s
}

// TestRollback_WrittenFilesModesAsGitCheckout: the files a rollback writes
// have the mode, group and ACLs git's checkout gives them, whether written
// in process or by git's checkout-index: under umask 022 and 077, in a
// folder with a default ACL, in a setgid folder of another group, and in
// folders the rollback makes again beneath those. Not parallel: it sets
// the process's umask, which every command it starts inherits.
func TestRollback_WrittenFilesModesAsGitCheckout(t *testing.T) {
	for _, umask := range []int{0o022, 0o077} {
		t.Run(fmt.Sprintf("umask%03o", umask), func(t *testing.T) {
			env := NewEnv(t)
			require.NoError(t, os.MkdirAll(env.Path("acl"), 0o755))
			setDefaultACL(t, env.Path("acl"))
			require.NoError(t, os.MkdirAll(env.Path("sg"), 0o755))
			require.NoError(t, os.Chown(env.Path("sg"), -1, 1))
			require.NoError(t, unix.Chmod(env.Path("sg"), 0o2775))
			files := []string{
				"plain/a.txt", "plain/run.sh",
				"acl/x.txt", "acl/run.sh", "acl/sub/w.txt",
				"sg/y.txt", "sg/run.sh", "sg/sub/q.txt",
				"gone/z.txt",
				// Written by git's checkout-index (a conversion applies).
				"acl/crlf.txt", "sg/crlf.txt", "acl/sub/crlf.txt", "sg/sub/crlf.txt", "plain/crlf.txt",
			}
			env.Write(".gitattributes", "crlf.txt text eol=crlf\n")
			for _, f := range files {
				eol := "\n"
				if strings.HasSuffix(f, "crlf.txt") {
					eol = "\r\n" // as git's checkout writes it
				}
				env.Write(f, "base "+f+eol)
				if strings.HasSuffix(f, ".sh") {
					require.NoError(t, os.Chmod(env.Path(f), 0o755))
				}
			}
			env.Commit("base")
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
			for _, f := range files {
				env.Write(f, "agent "+f+", longer\n")
			}
			// Folders the rollback makes again (its fallback: the file
			// is made in the stage by name).
			env.Remove("acl/sub")
			env.Remove("sg/sub")
			env.Remove("gone")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
			env.Tick()

			old := unix.Umask(umask)
			defer unix.Umask(old)
			res := env.Rollback("--checkpoint=k1", "--restore=files")
			require.True(t, *res.Exact)
			require.Equal(t, "", env.Git("status", "--porcelain"))
			paths := append([]string{"acl/sub", "sg/sub", "gone"}, files...)
			ours := map[string]string{}
			for _, p := range paths {
				ours[p] = checkoutModeOf(t, env.Path(p))
			}
			// git's checkout of the same files, from nothing.
			for _, f := range files {
				env.Remove(f)
			}
			env.Remove("acl/sub")
			env.Remove("sg/sub")
			env.Remove("gone")
			env.Git(append([]string{"checkout", "HEAD", "--"}, files...)...)
			var differ []string
			for _, p := range paths {
				if gits := checkoutModeOf(t, env.Path(p)); gits != ours[p] {
					differ = append(differ, fmt.Sprintf("%s: git's checkout %s, the rollback %s", p, gits, ours[p]))
				}
			}
			require.Empty(t, differ)
			require.Equal(t, "", env.Git("status", "--porcelain"))
		})
	}
}
