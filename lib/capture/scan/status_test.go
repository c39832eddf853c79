package scan

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// ParseStatus reads git's own porcelain v2 output: every path whose
// working-tree side differs from the index, new files and folders' files
// among them, and nothing that is only staged.
func TestParseStatus_GitsOutput(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644))
	}
	for _, p := range []string{"kept.txt", "edited.txt", "gone.txt", "staged.txt", "d/in.txt"} {
		write(p, p+"\n")
	}
	gittest.Run(t, dir, "", nil, "add", "-A")
	write("edited.txt", "changed\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.txt")))
	write("staged.txt", "staged\n")
	gittest.Run(t, dir, "", nil, "add", "staged.txt")
	write("new file.txt", "new\n")
	write("n/e/w.txt", "new\n")
	out := gittest.Run(t, dir, "", nil, "status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files=all")
	changes, err := ParseStatus([]byte(out + "\x00"))
	require.NoError(t, err)
	var got []string
	for _, c := range changes {
		tag := "tracked "
		if c.Untracked {
			tag = "new "
		}
		got = append(got, tag+c.Path)
	}
	sort.Strings(got)
	require.Equal(t, []string{"new n/e/w.txt", "new new file.txt", "tracked edited.txt", "tracked gone.txt"}, got)

	_, err = ParseStatus([]byte("2 R. N... 100644 100644 100644 a b R100 x\x00y\x00"))
	require.Error(t, err)
	_, err = ParseStatus([]byte("1 .M N...\x00"))
	require.Error(t, err)
}

func TestUnopened(t *testing.T) {
	long := strings.Repeat("d", 200) + "/" + strings.Repeat("e", 300)
	stderr := "warning: could not open directory 'locked/': Permission denied\n" +
		"warning: could not open directory 'gone/': No such file or directory\n" +
		"warning: something else\n" +
		"warning: could not open directory 'it's\nodd/': Permission denied\n" +
		"error: unrelated\n" +
		"warning: could not open directory '" + long // cut short, as git's 4096-byte messages are
	require.Equal(t, []string{"locked/", "it's\nodd/", strings.Repeat("d", 200) + "/"}, Unopened([]byte(stderr)))
	require.Empty(t, Unopened(nil))
}
