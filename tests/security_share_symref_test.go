package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecurity_PushNeverWritesThroughARemoteSymref: a symbolic ref
// planted in the pusher's namespace on the remote (anyone who can write
// a shared bare repository's refs) made push force-update the ref it
// names, the remote's main branch, to a checkpoint commit, or delete it
// as a stale name: git's receive-pack follows symbolic
// refs and a push has no --no-deref. Push now refuses and writes nothing;
// fetch takes nothing through such a ref.
func TestSecurity_PushNeverWritesThroughARemoteSymref(t *testing.T) {
	t.Parallel()
	for _, at := range []struct{ name, n string }{{"updated", "2"}, {"stale", "9"}} {
		t.Run(at.name, func(t *testing.T) {
			t.Parallel()
			c := newSharedCopy(t, 1)
			a := c.a
			main := a.Git("--git-dir="+c.remote, "rev-parse", "refs/heads/main")
			link := "refs/venom/shared/" + c.machine + "/a1/" + at.n
			a.Git("--git-dir="+c.remote, "symbolic-ref", link, "refs/heads/main")
			a.TurnN("a1", 2)

			r := a.Venom("checkpoint", "push", "--agent=a1", "--json")
			r.Fails(t, 1, "failed.remote")
			assert.Contains(t, r.Stdout, `"step":"symref"`)
			assert.Contains(t, r.Stdout, link)
			got := a.GitRaw("--git-dir="+c.remote, "rev-parse", "-q", "--verify", "refs/heads/main")
			require.Equal(t, 0, got.Code, "the remote's main is gone")
			assert.Equal(t, main+"\n", got.Stdout, "the push wrote the remote's main")
			assert.Equal(t, "refs/heads/main", a.Git("--git-dir="+c.remote, "symbolic-ref", link))

			// A fetch lists it as refused, and brings nothing through it.
			b := NewEnv(t)
			b.Git("remote", "add", "origin", c.remote)
			var res fetchResult
			b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &res)
			refused := map[string]string{}
			for _, x := range res.Refused {
				refused[x.Ref] = x.Reason
			}
			assert.Equal(t, "symbolic", refused[link], "%+v", res)
			assert.Empty(t, b.Git("for-each-ref", "refs/venom/remotes/origin/"+c.machine+"/a1/"+at.n))

			// The hint, run on the remote, removes the link only; then the
			// push goes through.
			a.Git("--git-dir="+c.remote, "symbolic-ref", "--delete", link)
			a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
			assert.Equal(t, main, a.Git("--git-dir="+c.remote, "rev-parse", "refs/heads/main"))
		})
	}
}
