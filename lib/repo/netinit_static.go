//go:build static

package repo

/*
#include <git2.h>
#include <git2/sys/stream.h>

// git_libgit2_init (which git2go calls before main) readies libgit2's
// network for every command: the SSH transport starts libssh2, which
// starts OpenSSL (its engines, error strings and CPU probes), and the TLS
// stream seeds mbedTLS's random generator from its entropy sources and
// builds its cipher list. That was about 3% of a hook call's CPU, and
// git-venom never talks to a server through libgit2: fetch and push run
// git(1). In the static link (lib/static) the first of two definitions of
// a symbol wins, so these two take the place of libgit2's own.
//
// The TLS stream is registered as one that refuses to open: an HTTPS
// remote used through libgit2 fails with this message, where mbedTLS left
// unready would not be safe to call. libssh2 starts itself when a session
// is made (libssh2_session_init_ex), so SSH needs no stand-in.
static int venom_tls_started, venom_ssh_started;

static int venom_tls_refuse(git_stream **out, const char *host, const char *port) {
	(void)out;
	(void)host;
	(void)port;
	git_error_set_str(GIT_ERROR_SSL, "git-venom does not open TLS connections through libgit2");
	return -1;
}

static int venom_tls_refuse_wrap(git_stream **out, git_stream *in, const char *host) {
	(void)in;
	return venom_tls_refuse(out, host, NULL);
}

int git_mbedtls_stream_global_init(void) {
	git_stream_registration refuse = {GIT_STREAM_VERSION, venom_tls_refuse, venom_tls_refuse_wrap};
	venom_tls_started = 1;
	return git_stream_register(GIT_STREAM_TLS, &refuse);
}

int git_transport_ssh_global_init(void) {
	venom_ssh_started = 1;
	return 0;
}

static int venom_network_init_replaced(void) { return venom_tls_started && venom_ssh_started; }
*/
import "C"

// networkInitReplaced reports whether libgit2's start-up ran git-venom's
// TLS and SSH start-up instead of its own.
func networkInitReplaced() bool { return C.venom_network_init_replaced() == 1 }
