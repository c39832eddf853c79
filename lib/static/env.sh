# Sourced by install.sh, tests/run and tests/fuzz (bash): when Debian's
# static archives of libgit2 and its libraries are there, every go command
# that follows links libgit2 into the binaries (see libgit2.pc); otherwise
# the build stays on the shared library, slower to start but the same
# otherwise.
venom_static_archives() {
  local lib
  lib="$(pkg-config --variable=libdir libgit2 2>/dev/null)" || return 1
  for a in libgit2 libmbedtls libmbedx509 libmbedcrypto libhttp_parser libssh2 libcrypto libpcre2-8 libz; do
    [ -e "$lib/$a.a" ] || return 1
  done
  [ -e "$lib/libgssapi_krb5.so.2" ]
}
# venom_tags TAG prints the -tags value for go commands that need TAG as
# well: a -tags on go's command line replaces the tags of GOFLAGS (go env's
# or the environment's), so this lists those, as go reads them, then TAG.
venom_tags() {
  go list -f "{{range context.BuildTags}}{{if ne . \"$1\"}}{{.}},{{end}}{{end}}$1" runtime
}
venom_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "${PKG_CONFIG_PATH:-}" = "$venom_here" ]; then
  # Sourced again (tests/fuzz under tests/run): already linking statically,
  # and pkg-config would now read this folder's libgit2.pc, not Debian's.
  :
elif venom_static_archives; then
  export PKG_CONFIG_PATH="$venom_here"
  export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=static,system_libgit2"
else
  echo "git-venom: libgit2's static archives are missing; linking the shared library" >&2
fi
