//go:build static

package repo

/*
// The statically linked libgit2 calls GSSAPI only to offer Kerberos
// ("Negotiate") to an HTTP server, and git-venom never talks to a server
// through libgit2. Debian has no static GSSAPI, so linking the shared one
// loaded eight libraries (krb5 and its own) into every command, about 3 ms
// of each start. These stand-ins fail every call with GSS_S_FAILURE, so
// libgit2 would find no mechanism and offer no Negotiate.
#define VENOM_GSS_S_FAILURE (13u << 16)

typedef struct { unsigned int length; void *elements; } venom_gss_oid_desc;

unsigned int gss_delete_sec_context(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_display_status(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_import_name(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_indicate_mechs(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_init_sec_context(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_release_buffer(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_release_name(void) { return VENOM_GSS_S_FAILURE; }
unsigned int gss_release_oid_set(void) { return VENOM_GSS_S_FAILURE; }

static venom_gss_oid_desc venom_no_name_type;
venom_gss_oid_desc *GSS_C_NT_HOSTBASED_SERVICE = &venom_no_name_type;
*/
import "C"
