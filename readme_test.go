package idempay_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeErrorsTableIsTrue: every sentinel of errors.go (the errors a
// Charge can end with) has a row in the README's errors table, and every
// name in that table is an error the package exports, so that the table a
// caller writes a switch from is the package's own list.
func TestReadmeErrorsTableIsTrue(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "\n## Errors\n")
	if start < 0 {
		t.Fatal("README.md has no \"## Errors\" section")
	}
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	inTable := map[string]bool{}
	name := regexp.MustCompile("`\\*?([A-Z][A-Za-z]+)`")
	for _, cell := range regexp.MustCompile(`(?m)^\| ([^|]+) \|`).FindAllStringSubmatch(section, -1) {
		for _, m := range name.FindAllStringSubmatch(cell[1], -1) {
			inTable[m[1]] = true
		}
	}

	exported, sentinels := exportedErrors(t)
	for name := range inTable {
		if !exported[name] {
			t.Errorf("README's errors table names %s, which package idempay does not export", name)
		}
	}
	for _, name := range sentinels {
		if !inTable[name] {
			t.Errorf("errors.go defines %s, but README's errors table has no row for it", name)
		}
	}
}

// exportedErrors reads the package's source: every exported name (types
// and variables), and the Err variables of errors.go in order.
func exportedErrors(t *testing.T) (map[string]bool, []string) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	var sentinels []string
	for name, f := range pkgs["idempay"].Files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					exported[s.Name.Name] = s.Name.IsExported()
				case *ast.ValueSpec:
					for _, n := range s.Names {
						exported[n.Name] = n.IsExported()
						if name == "errors.go" && gd.Tok == token.VAR && strings.HasPrefix(n.Name, "Err") {
							sentinels = append(sentinels, n.Name)
						}
					}
				}
			}
		}
	}
	return exported, sentinels
}
