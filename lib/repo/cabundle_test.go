//go:build !static

package repo

import "testing"

// libgit2's start-up (git2go's init, before any test) must have called our
// parser, or every command parses the system's CA bundle again.
func TestCABundleParseIsSkipped(t *testing.T) {
	if !caBundleSkipped() {
		t.Fatal("libgit2's start-up parsed the CA bundle itself: mbedtls_x509_crt_parse_file was not replaced")
	}
}
