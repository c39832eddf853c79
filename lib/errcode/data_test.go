package errcode

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every registered code declares the shape of its data, and every shape
// is of a registered code.
func TestDataShapeForEveryCode(t *testing.T) {
	for code := range Registry {
		_, ok := Data[code]
		assert.True(t, ok, "%s has no entry in errcode.Data", code)
	}
	for code, shape := range Data {
		_, ok := Registry[code]
		assert.True(t, ok, "errcode.Data names %s, which is not registered", code)
		seen := map[string]bool{}
		for _, m := range shape.Members {
			name := strings.TrimSuffix(m, "?")
			assert.False(t, seen[name], "%s declares %s twice", code, name)
			seen[name] = true
		}
	}
	// RepoReason is the Go type of the codes that declare {repo, reason}.
	assert.Equal(t, []string{"repo", "reason"}, jsonNames(reflect.TypeOf(RepoReason{})))
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		out = append(out, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return out
}

// dynamicCodes are the New/Newf calls whose code is a variable, so no
// one shape applies: they pass on a coded error's own code and data
// (e.Code), report a foreign error under a caller's code with no data
// (fallback), or raise the lock timeout its caller names with {repo}
// (timeoutCode: timeout.lock or timeout.checkpoint, both {repo}).
var dynamicCodes = map[string]bool{"e.Code": true, "fallback": true, "timeoutCode": true}

// TestDataShapesOfCallSites reads every errcode.New and errcode.Newf call
// in lib/ and checks the members its data argument can carry against its
// code's Shape: no undeclared member, every required one present, nil
// only where the shape allows no data.
func TestDataShapesOfCallSites(t *testing.T) {
	consts := codeConsts(t)
	files := libFiles(t)
	structs := structMembers(files)
	calls := 0
	for _, f := range files {
		for _, decl := range f.file.Decls {
			fn, _ := decl.(*ast.FuncDecl)
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isNew(f.file, call) || len(call.Args) < 2 {
					return true
				}
				calls++
				where := f.fset.Position(call.Pos()).String()
				codeExpr := exprString(call.Args[0])
				code, ok := consts[strings.TrimPrefix(codeExpr, "errcode.")]
				if !ok {
					assert.True(t, dynamicCodes[codeExpr], "%s: the code %s is neither a registry constant nor a known pass-through", where, codeExpr)
					return true
				}
				shape, ok := Data[code]
				if !assert.True(t, ok, "%s: %s has no data shape", where, code) {
					return true
				}
				checkData(t, where, code, shape, call, f, fn, structs)
				return true
			})
		}
	}
	assert.Greater(t, calls, 100, "the walk found too few calls to be looking at lib/")
}

// checkData compares what data can hold with shape.
func checkData(t *testing.T, where string, code Code, shape Shape, call *ast.CallExpr, f srcFile, fn *ast.FuncDecl, structs map[string][]string) {
	data := call.Args[1]
	if id, ok := data.(*ast.Ident); ok && id.Name == "nil" {
		assert.True(t, shape.Nullable, "%s: %s passes nil data, but its shape is %s", where, code, shape)
		return
	}
	always, sometimes, err := members(data, call.Pos(), f, fn, structs)
	if !assert.NoError(t, err, "%s: %s", where, code) {
		return
	}
	declared := map[string]bool{}
	for _, m := range shape.Members {
		name, optional := strings.CutSuffix(m, "?")
		declared[name] = true
		if !optional {
			assert.Contains(t, always, name, "%s: %s's data lacks %s (shape %s)", where, code, name, shape)
		}
	}
	for _, m := range append(always, sometimes...) {
		assert.True(t, declared[m], "%s: %s's data carries %s, not in its shape %s", where, code, m, shape)
	}
}

// members lists the JSON members a data expression always carries and
// those it may carry: a map literal's keys, a struct's json names, or a
// local variable's literal and the keys set on it before the call (at).
func members(data ast.Expr, at token.Pos, f srcFile, fn *ast.FuncDecl, structs map[string][]string) (always, sometimes []string, err error) {
	if u, ok := data.(*ast.UnaryExpr); ok && u.Op == token.AND {
		data = u.X
	}
	switch d := data.(type) {
	case *ast.CompositeLit:
		if _, ok := d.Type.(*ast.MapType); ok {
			for _, el := range d.Elts {
				kv := el.(*ast.KeyValueExpr)
				if lit, ok := kv.Key.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					always = append(always, s)
					continue
				}
				keys, err := paramValues(kv.Key, f, fn)
				if err != nil {
					return nil, nil, err
				}
				sometimes = append(sometimes, keys...)
			}
			return always, sometimes, nil
		}
		name := exprString(d.Type)
		if !strings.Contains(name, ".") {
			name = f.file.Name.Name + "." + name
		}
		fields, ok := structs[name]
		if !ok {
			return nil, nil, fmt.Errorf("data of type %s: no such struct in lib/", name)
		}
		for _, m := range fields {
			if name, ok := strings.CutSuffix(m, "?"); ok {
				sometimes = append(sometimes, name)
			} else {
				always = append(always, m)
			}
		}
		return always, sometimes, nil
	case *ast.Ident:
		if fn == nil {
			return nil, nil, fmt.Errorf("data %s outside a function", d.Name)
		}
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			switch l := as.Lhs[0].(type) {
			case *ast.Ident: // data := map[...]...{...}
				if l.Name == d.Name {
					a, s, e := members(as.Rhs[0], at, f, nil, structs)
					always, sometimes, err, found = append(always, a...), append(sometimes, s...), e, true
				}
			case *ast.IndexExpr: // data["member"] = ...
				id, ok1 := l.X.(*ast.Ident)
				lit, ok2 := l.Index.(*ast.BasicLit)
				if ok1 && ok2 && id.Name == d.Name && as.Pos() < at {
					s, _ := strconv.Unquote(lit.Value)
					sometimes = append(sometimes, s)
				}
			}
			return true
		})
		if !found && err == nil {
			err = fmt.Errorf("data %s: no literal assigned to it in %s", d.Name, fn.Name.Name)
		}
		return always, sometimes, err
	}
	return nil, nil, fmt.Errorf("data %s is not a literal, a struct or a local variable the test can read", exprString(data))
}

// paramValues resolves a map key that is a parameter of fn to the string
// literals fn's callers in the same file pass for it.
func paramValues(key ast.Expr, f srcFile, fn *ast.FuncDecl) ([]string, error) {
	id, ok := key.(*ast.Ident)
	if !ok || fn == nil {
		return nil, fmt.Errorf("map key %s is neither a string literal nor a parameter", exprString(key))
	}
	at := -1
	i := 0
	for _, field := range fn.Type.Params.List {
		for _, name := range field.Names {
			if name.Name == id.Name {
				at = i
			}
			i++
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("map key %s is not a parameter of %s", id.Name, fn.Name.Name)
	}
	var out []string
	var err error
	ast.Inspect(f.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || exprString(call.Fun) != fn.Name.Name || len(call.Args) <= at {
			return true
		}
		lit, ok := call.Args[at].(*ast.BasicLit)
		if !ok {
			err = fmt.Errorf("a call of %s passes %s for the map key %s", fn.Name.Name, exprString(call.Args[at]), id.Name)
			return true
		}
		s, _ := strconv.Unquote(lit.Value)
		out = append(out, s)
		return true
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no call of %s names the map key %s", fn.Name.Name, id.Name)
	}
	return out, err
}

type srcFile struct {
	fset *token.FileSet
	file *ast.File
}

func libFiles(t *testing.T) []srcFile {
	fset := token.NewFileSet()
	var out []srcFile
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		out = append(out, srcFile{fset, f})
		return nil
	})
	require.NoError(t, err)
	return out
}

// codeConsts maps the registry's constant names to their codes, read from
// this package's source.
func codeConsts(t *testing.T) map[string]Code {
	f, err := parser.ParseFile(token.NewFileSet(), "errcode.go", nil, 0)
	require.NoError(t, err)
	out := map[string]Code{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if exprString(vs.Type) != "Code" {
				continue
			}
			s, _ := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			out[vs.Names[0].Name] = Code(s)
		}
	}
	require.Len(t, out, len(Registry), "the constants read do not match the registry")
	return out
}

// structMembers maps "package.Type" to its JSON member names, "name?" for
// an omitempty one.
func structMembers(files []srcFile) map[string][]string {
	out := map[string][]string{}
	for _, f := range files {
		ast.Inspect(f.file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			var names []string
			for _, field := range st.Fields.List {
				tag := ""
				if field.Tag != nil {
					s, _ := strconv.Unquote(field.Tag.Value)
					tag = reflect.StructTag(s).Get("json")
				}
				name, opts, _ := strings.Cut(tag, ",")
				if name == "-" {
					continue
				}
				if name == "" && len(field.Names) > 0 {
					name = field.Names[0].Name
				}
				if strings.Contains(opts, "omitempty") {
					name += "?"
				}
				names = append(names, name)
			}
			out[f.file.Name.Name+"."+ts.Name.Name] = names
			return true
		})
	}
	return out
}

// isNew reports whether call is errcode.New or errcode.Newf (New or Newf
// inside this package).
func isNew(f *ast.File, call *ast.CallExpr) bool {
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		x, ok := fn.X.(*ast.Ident)
		return ok && x.Name == "errcode" && (fn.Sel.Name == "New" || fn.Sel.Name == "Newf")
	case *ast.Ident:
		return f.Name.Name == "errcode" && (fn.Name == "New" || fn.Name == "Newf")
	}
	return false
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case nil:
		return ""
	}
	return fmt.Sprintf("%T", e)
}
