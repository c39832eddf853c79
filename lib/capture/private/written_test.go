package private

import (
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/treeedit"
)

// TestKnown_Back: the known tree stands for the private index's new tree
// only when it was made from the index's tree and every file noted is one
// of its changes as it holds it; the changes not noted are put back to
// the base's entries (a deletion where the base had nothing).
func TestKnown_Back(t *testing.T) {
	id := func(b byte) git.Oid {
		var o git.Oid
		o[0] = b
		return o
	}
	hex := func(b byte) string { o := id(b); return o.String() }
	base, tree := id(1), id(2)
	k := Known{Base: &base, Tree: &tree, Changes: []KnownChange{
		{Path: "a", BaseMode: 0o100644, TreeMode: 0o100644, BaseID: id(10), TreeID: id(11)},
		{Path: "b", BaseMode: 0o100644, TreeMode: 0o100755, BaseID: id(20), TreeID: id(21)},
		{Path: "c/new", TreeMode: 0o100644, TreeID: id(31)},
		{Path: "d", BaseMode: 0o120000, BaseID: id(40)},
	}}
	noted := []treeedit.Edit{{Path: "a", Mode: 0o100644, Oid: hex(11)}, {Path: "b", Mode: 0o100755, Oid: hex(21)}}
	back, ok := k.back(base.String(), noted)
	require.True(t, ok)
	require.Equal(t, []treeedit.Edit{{Path: "c/new", Mode: 0, ID: id(0)}, {Path: "d", Mode: 0o120000, ID: id(40)}}, back)

	back, ok = k.back(base.String(), append(noted, treeedit.Edit{Path: "c/new", Mode: 0o100644, Oid: hex(31)},
		treeedit.Edit{Path: "d", Mode: 0o120000, Oid: hex(40)}))
	require.False(t, ok, "d is deleted in the known tree, not set")
	require.Nil(t, back)

	for name, edits := range map[string][]treeedit.Edit{
		"another object": {{Path: "a", Mode: 0o100644, Oid: hex(12)}},
		"another mode":   {{Path: "b", Mode: 0o100644, Oid: hex(21)}},
		"not a change":   {{Path: "e", Mode: 0o100644, Oid: hex(11)}},
		"twice":          {{Path: "a", Mode: 0o100644, Oid: hex(11)}, {Path: "a", Mode: 0o100644, Oid: hex(11)}},
	} {
		_, ok := k.back(base.String(), edits)
		require.False(t, ok, name)
	}
	_, ok = k.back(tree.String(), noted)
	require.False(t, ok, "made from another tree")
	_, ok = Known{}.back(base.String(), noted)
	require.False(t, ok, "nothing known")
	back, ok = k.back(base.String(), nil)
	require.True(t, ok)
	require.Len(t, back, 4, "nothing noted: every change put back")
}
