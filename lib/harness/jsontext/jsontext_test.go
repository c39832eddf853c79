package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/harness/ojson"
)

func TestParseErrorsNameLineAndColumn(t *testing.T) {
	for text, want := range map[string]string{
		"{\n  \"a\": 1,\n}":           "line 3, column 1: unexpected '}', expected a member name in quotes",
		"{\n  \"a\": tru\n}":          "line 2, column 8: unexpected 't', expected a value",
		"{\"a\": 1} x":                "line 1, column 10: unexpected 'x' after the JSON value",
		"{\n  // note\n  \"a\": 1\n}": "line 2, column 3: unexpected '/', expected a member name in quotes",
		"{\"é\": 01}":                 "line 1, column 7: a number has a leading zero",
	} {
		_, err := Parse([]byte(text), false)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", text, err)
		assert.Equal(t, want, err.Error(), "%q", text)
	}
	_, err := Parse([]byte("{\n  // note\n  \"a\": /* x */ 1\n}"), true)
	assert.NoError(t, err, "comments where Gemini CLI allows them")
}

// handler is a value install inserts: strings with commas, colons and
// quotes, which the one-line form must not space out.
func handler() any {
	h := ojson.NewObject()
	h.Set("type", "command")
	h.Set("command", `git venom-checkpoint hook x --agent="a, b: c"`)
	h.Set("timeout", json.Number("40"))
	return h
}

// Inserting an entry touches nothing else; removing it gives back the
// exact bytes.
func TestInsertThenRemoveIsExact(t *testing.T) {
	for _, tc := range []struct{ text, inserted string }{
		{"{\n  \"a\": 1\n}\n", "{\n  \"a\": 1,\n  \"v\": {\n    \"type\": \"command\",\n"},
		{`{"permissions": {"allow": ["Bash(ls:*)"]}}`, `{"permissions": {"allow": ["Bash(ls:*)"]}, "v": {"type": "command", "command": "git venom-checkpoint hook x --agent=\"a, b: c\"", "timeout": 40}}`},
		{"{\r\n\t\"a\": [1, 2] // two\r\n}\r\n", "{\r\n\t\"a\": [1, 2], // two\r\n\t\"v\": {\r\n\t\t\"type\""},
	} {
		doc, err := Parse([]byte(tc.text), true)
		require.NoError(t, err)
		out := doc.InsertMember(doc.Root, "v", handler())
		assert.Contains(t, string(out), tc.inserted)
		back, err := Parse(out, true)
		require.NoError(t, err, "%s", out)
		i, _ := back.Root.Member("v")
		assert.Equal(t, tc.text, string(back.RemoveMember(back.Root, i)))
	}
}

// FuzzEdit: Parse accepts exactly what encoding/json does (without
// comments); an element or member inserted anywhere leaves valid JSON
// equal to the model with it added, and its removal restores the bytes.
func FuzzEdit(f *testing.F) {
	for _, s := range []string{
		"{}", "[]", "{\n}", `{"a":[1,2,3]}`, "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n",
		"{\n  \"a\": 1, // c\n  \"b\": [ /* x */ ]\n}", `[{"k":"v,:\"x"},{}]`, "\"s\"", "1e5",
		"{\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{ \"hooks\": [] }\n\t\t]\n\t}\n}",
	} {
		f.Add([]byte(s), uint8(0), uint8(0), true)
		f.Add([]byte(s), uint8(1), uint8(1), false)
	}
	f.Fuzz(func(t *testing.T, text []byte, which, at uint8, comments bool) {
		doc, err := Parse(text, comments)
		if !comments && (err == nil) != json.Valid(text) {
			t.Fatalf("Parse error %v, json.Valid %v", err, json.Valid(text))
		}
		if err != nil {
			return
		}
		var conts []*Value
		var walk func(v *Value)
		walk = func(v *Value) {
			if v.Kind == Object || v.Kind == Array {
				conts = append(conts, v)
			}
			for _, m := range v.Members {
				walk(m.Value)
			}
			for _, e := range v.Elems {
				walk(e)
			}
		}
		walk(doc.Root)
		if len(conts) == 0 {
			return
		}
		c := conts[int(which)%len(conts)]
		n := len(items(c))
		idx := int(at) % (n + 1)
		var out []byte
		if c.Kind == Object {
			idx = n
			out = doc.InsertMember(c, "venom\",:", handler())
		} else {
			out = doc.InsertElem(c, idx, handler())
		}
		edited, err := Parse(out, comments)
		require.NoError(t, err, "insert made invalid JSON:\n%s", out)
		if !comments {
			assert.True(t, json.Valid(out))
		}
		// The model: the container decoded, the item added.
		before, err := doc.Decode(c)
		require.NoError(t, err)
		var after *Value
		var find func(v *Value)
		find = func(v *Value) {
			if v.Start == c.Start {
				after = v
			}
			for _, m := range v.Members {
				find(m.Value)
			}
			for _, e := range v.Elems {
				find(e)
			}
		}
		find(edited.Root)
		require.NotNil(t, after)
		got, err := edited.Decode(after)
		require.NoError(t, err)
		switch b := before.(type) {
		case *ojson.Object:
			b.Set("venom\",:", handler())
		case []any:
			before = append(b[:idx:idx], append([]any{handler()}, b[idx:]...)...)
		}
		assert.Equal(t, string(ojson.Compact(before)), string(ojson.Compact(got)))
		// Removed again: the bytes as they were (an empty container's
		// white space aside, which an insert replaces).
		back := edited.RemoveElem(after, idx)
		if c.Kind == Object {
			i, _ := after.Member("venom\",:")
			back = edited.RemoveMember(after, i)
		}
		if n > 0 || bytes.Equal(doc.Bytes(c), []byte("{}")) || bytes.Equal(doc.Bytes(c), []byte("[]")) {
			assert.Equal(t, string(text), string(back))
		}
		// Any item removed leaves valid JSON: the model without it.
		if n == 0 {
			return
		}
		rm := int(at) % n
		var cut []byte
		switch b := before.(type) {
		case *ojson.Object:
			cut = doc.RemoveMember(c, rm)
			seen := map[string]bool{}
			for _, m := range c.Members {
				if seen[m.Key] {
					return // a duplicate's removal brings the other back
				}
				seen[m.Key] = true
			}
			b.Delete("venom\",:")
			b.Delete(c.Members[rm].Key)
		case []any:
			cut = doc.RemoveElem(c, rm)
			before = append(b[:idx:idx], b[idx+1:]...)
			before = append(before.([]any)[:rm:rm], before.([]any)[rm+1:]...)
		}
		removed, err := Parse(cut, comments)
		require.NoError(t, err, "removal made invalid JSON:\n%s", cut)
		after = nil
		find(removed.Root)
		require.NotNil(t, after)
		got, err = removed.Decode(after)
		require.NoError(t, err)
		assert.Equal(t, string(ojson.Compact(before)), string(ojson.Compact(got)))
	})
}
