//go:build static

package repo

import (
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
)

// libgit2's start-up (git2go's init, before any test) must have run
// git-venom's TLS and SSH start-up (netinit_static.go), not OpenSSL's and
// mbedTLS's.
func TestNetworkInitReplaced(t *testing.T) {
	if !networkInitReplaced() {
		t.Fatal("libgit2 started its own TLS stream or SSH transport: netinit_static.go's were not linked first")
	}
}

// An HTTPS remote used through libgit2 is refused with a message before
// any connection, never handed to an mbedTLS that was not started.
func TestHTTPSThroughLibgit2Refused(t *testing.T) {
	r, err := git.InitRepository(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Free()
	remote, err := r.Remotes.CreateAnonymous("https://127.0.0.1:9/x.git")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Free()
	err = remote.Fetch(nil, &git.FetchOptions{}, "")
	if err == nil || !strings.Contains(err.Error(), "git-venom does not open TLS connections through libgit2") {
		t.Fatalf("fetch over HTTPS through libgit2: %v, want the refusal", err)
	}
}
