package checkpoints

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
)

// Every reason code a checkpoint_files_only refusal can carry has words a
// person reads, never the code itself, and fits a hint line.
func TestWhyWords_EveryCodeInWords(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "conversation.go", nil, 0)
	require.NoError(t, err)
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Names) == 1 && strings.HasPrefix(v.Names[0].Name, "Why") {
			if l, ok := v.Values[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(l.Value)
				codes = append(codes, s)
			}
		}
		return true
	})
	require.Len(t, codes, 6)
	t1, t2 := "t12", "t11"
	for _, code := range codes {
		for _, c := range []*agents.Checkpoint{{}, ck("k3", false)} {
			c.Turn, c.ThroughTurn = &t1, &t2
			w := WhyWords(c, code)
			assert.NotEqual(t, code, w)
			assert.NotContains(t, w, "_", "a code, not words")
			assert.LessOrEqual(t, len("hint: "+w), 80, w)
		}
		assert.NotContains(t, WhyWords(&agents.Checkpoint{}, code), "<nil>")
	}
	c := &agents.Checkpoint{}
	c.Turn, c.ThroughTurn = &t1, &t2
	assert.Equal(t, "an earlier rollback took turn t11 out of the conversation", WhyWords(c, WhyDroppedTurn))
	assert.Equal(t, "it was taken inside turn t12; no point of the conversation matches it", WhyWords(c, WhyMidTurn))
}
