//go:build static

package repo

import (
	"os"
	"strings"
	"testing"
)

// A static build must not load GSSAPI's shared libraries (gssapi_static.go).
func TestStaticBuildLoadsNoGSSAPI(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps")
	}
	for _, lib := range []string{"libgssapi_krb5", "libkrb5", "libgit2.so"} {
		if strings.Contains(string(maps), lib) {
			t.Errorf("%s is loaded", lib)
		}
	}
}
