package statefile

import "testing"

// FuzzParseShared checks what git's rules promise for every value
// ParseShared takes (TestShared_AgreesWithGit checks the values against
// git itself): the owner keeps read and write on a file and everything on
// a folder, others get write only from an octal value that says so (git
// takes 0666), a read-only file stays so, a folder's readers can search
// it, and umask changes nothing.
func FuzzParseShared(f *testing.F) {
	for _, v := range []string{"group", "all", "umask", "true", "false", "0640", "0660", "0600", "1", "2",
		"0x10", "1k", " 0660", "bogus", "0400", "-1", ""} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParseShared(v, true)
		if err != nil {
			return
		}
		for _, made := range []uint32{0o644, 0o600, 0o666, 0o444} {
			file := s.Mode(made, false)
			if made&0o600 == 0o600 && file&0o600 != 0o600 {
				t.Fatalf("%q: a file made %o becomes %o: the owner lost read or write", v, made, file)
			}
			if made&0o002 == 0 && file&0o002 != 0 && !(s < 0 && -s&0o002 != 0) {
				t.Fatalf("%q: a file made %o becomes %o: others may write", v, made, file)
			}
			if made&0o222 == 0 && file&0o222 != 0 {
				t.Fatalf("%q: a read-only file made %o becomes writable (%o)", v, made, file)
			}
			if s == SharedUmask && file != made {
				t.Fatalf("umask changed %o to %o", made, file)
			}
		}
		for _, made := range []uint32{0o755, 0o700, 0o777} {
			dir := s.Mode(made, true) & 0o777
			if dir&0o700 != 0o700 {
				t.Fatalf("%q: a folder made %o becomes %o: the owner lost access", v, made, dir)
			}
			if r, x := (dir&0o444)>>2, dir&0o111; r&^x != 0 {
				t.Fatalf("%q: a folder %o is readable without search", v, dir)
			}
		}
	})
}
