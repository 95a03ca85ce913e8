package webhook_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shipped package carries no test-only switch: the clock a test moves
// is set through export_test.go, not an exported option.
func TestShippedAPIHasNoClockSwitch(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	var exported []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for name, obj := range f.Scope.Objects {
				if ast.IsExported(name) && obj.Kind != ast.Bad {
					exported = append(exported, name)
				}
			}
		}
	}
	require.NotEmpty(t, exported)
	assert.NotContains(t, exported, "WithClock")
	assert.NotContains(t, exported, "ClockOption")
}
