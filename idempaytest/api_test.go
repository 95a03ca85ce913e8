package idempaytest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// What a consumer reads in go doc of the kit names no type of an internal
// package: every exported declaration's type, signature and alias is in
// terms of packages the consumer can import.
func TestKitDocsNameNoInternalType(t *testing.T) {
	for _, dir := range []string{".", "stripetest", "omisetest", "twoc2ptest", "clients", "fakes"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for name, f := range p.Files {
				for _, bad := range internalRefs(f) {
					t.Errorf("%s: %s names %s, an internal package's type", filepath.Join(dir, filepath.Base(name)), bad[0], bad[1])
				}
			}
		}
	}
}

// internalRefs lists the exported declarations of f whose type or
// signature selects from an import under internal/.
func internalRefs(f *ast.File) [][2]string {
	internal := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(path, "/internal/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = true
	}
	var out [][2]string
	check := func(decl string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
					out = append(out, [2]string{decl, id.Name + "." + sel.Sel.Name})
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
				check(d.Name.Name, d.Type)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						check(s.Name.Name, exportedPart(s.Type))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil {
							check(n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(r *ast.FieldList) bool {
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedPart is what go doc shows of a type: a struct's exported and
// embedded fields, an interface's methods, anything else whole.
func exportedPart(e ast.Expr) ast.Node {
	st, ok := e.(*ast.StructType)
	if !ok {
		return e
	}
	shown := &ast.FieldList{}
	for _, fl := range st.Fields.List {
		if len(fl.Names) == 0 || fl.Names[0].IsExported() {
			shown.List = append(shown.List, fl)
		}
	}
	return shown
}
