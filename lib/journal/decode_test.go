package journal

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill sets every exported field to a value that is not zero, so a member
// the fast decoder does not know makes it fall back, which the test sees.
func fill(v reflect.Value, tag string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("v-" + tag + " \"q\" \\ é \u2028 \t")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(42)
	case reflect.Ptr:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), tag)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), fmt.Sprint(tag, i))
		}
		v.Set(s)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i), f.Name)
			}
		}
	}
}

func TestDecode_KnowsEveryMember(t *testing.T) {
	var e Entry
	fill(reflect.ValueOf(&e).Elem(), "")
	line, err := json.Marshal(e)
	require.NoError(t, err)
	var fast Entry
	d := decoder{b: string(line)}
	require.True(t, d.entry(&fast) && d.end(), "the fast decoder fell back on %s: teach decode.go the new member", line)
	var slow Entry
	require.NoError(t, json.Unmarshal(line, &slow))
	assert.Equal(t, slow, fast)
}

func TestDecode_AgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{"seq":1,"ts":"2026-11-30T00:00:00.000Z","type":"agent.registered","agent":"a1","tree":"/t","isolation":"in_place","harness":"none","parent":null}`,
		`{"seq":2,"ts":"x","type":"checkpoint.taken","agent":"a1","checkpoint":"k1","reason":"manual","turn":null,"through_turn":"t1","at":"x","mid_turn":false,"overlap":true,"repos":[{"repo":".","path":"/t","commit":"c","head":null,"skipped":[{"path":"big","bytes":9,"reason":"too_big"}],"submodules":[]}]}`,
		`{"seq":3,"ts":"x","type":"rollback.ended","agent":"a1","ok":false,"code":"failed.x","drops":null}`,
		`{"seq":4,"ts":"x","type":"edit.recorded","agent":"a1","turn":"t1","paths":["a\u00e9\ud83d\ude00","b\n"]}`,
		`{ "seq" : 5 , "ts":"x", "type":"checkpoint.pruned","agent":"a1","checkpoints":[ "k1" , "k2" ] }`,
		`{"seq":6,"ts":"x","type":"x","unknown":{"nested":[1,2,{"a":null}]}}`,
		`{"seq":7.0,"ts":"x","type":"x"}`,
		`{"seq":8,"ts":"x","type":"x","agent":"\ud800"}`,
		`{"seq":9,"ts":"x","type":"x","Agent":"case"}`,
		`{"seq":10,"ts":"x","type":"x","agent":"a"} trailing`,
		"{\"seq\":11,\"ts\":\"x\",\"type\":\"x\",\"agent\":\"\xff\"}",
		`{"seq":12,"ts":"x","type":"x","removed":3,"kept":-1,"ok":true,"no_start":true}`,
		`{"seq":14,"ts":"x","type":"agent.registered","agent":"a1","tree":"/t","isolation":"worktree","harness":"none","parent":null,"worktree":{"git_dir":"/r/.git/worktrees/t","made":"1-2"}}`,
		`{"seq":15,"ts":"x","type":"agent.registered","agent":"a1","worktree":null}`,
		`{"seq":16,"ts":"x","type":"agent.registered","agent":"a1","worktree":{"git_dir":"/r/.git","other":1}}`,
		`{"seq":17,"ts":"x","type":"rollback.ended","agent":"a1","ok":true,"unseen":[".gitignore","notes.txt"]}`,
		`{"seq":13`,
		`[]`,
	}
	for _, l := range lines {
		var fast, slow Entry
		ferr := decode([]byte(l), &fast)
		serr := json.Unmarshal([]byte(l), &slow)
		assert.Equal(t, serr == nil, ferr == nil, l)
		if serr == nil {
			assert.Equal(t, slow, fast, l)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"seq":2,"ts":"2026-11-30T12:00:00.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k1","reason":"turn_end","turn":"t1","through_turn":"t1","at":"2026-11-30T12:00:00.000Z","mid_turn":false,"overlap":false,"repos":[{"repo":".","path":"/home/u/src/project","commit":"3b7e9d10c2a4f6815e7d9b0c1a2f3e4d5c6b7a89","head":"8f3a1c9e5d7b2046a1c3e5f708192a3b4c5d6e7f","branch":"main","skipped":[],"submodules":[]}]}`)
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var e Entry
			_ = decode(line, &e)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var e Entry
			_ = json.Unmarshal(line, &e)
		}
	})
}
