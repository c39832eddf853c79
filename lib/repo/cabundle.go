//go:build !static

package repo

/*
// Debian's libgit2 1.5 uses mbedTLS for HTTPS, and git_libgit2_init (which
// git2go calls before main) parses the whole system CA bundle with it:
// about a fifth of the start-up of every git-venom command. git-venom never
// opens a network connection through libgit2, so this definition takes the
// place of mbedTLS's in the process: an executable's symbols come first
// when the dynamic linker binds libgit2's calls. (The static link, see
// lib/static, replaces the whole TLS start-up instead: netinit_static.go.)
// It loads nothing and reports success, which leaves libgit2's chain of trusted CAs
// empty: an HTTPS fetch through libgit2 would be refused, never trusted
// blindly.
static int venom_ca_parse_skipped;

int mbedtls_x509_crt_parse_file(void *chain, const char *path) {
	(void)chain;
	(void)path;
	venom_ca_parse_skipped = 1;
	return 0;
}

static int venom_ca_bundle_skipped(void) { return venom_ca_parse_skipped; }
*/
import "C"

// caBundleSkipped reports whether libgit2's start-up called git-venom's
// CA bundle parser rather than mbedTLS's.
func caBundleSkipped() bool { return C.venom_ca_bundle_skipped() == 1 }
