package submission

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestProblemTypesAreTheDocumentedOnes holds the Type constants of
// problem.go and the sections of docs/api.md's Errors to one list: a kind
// of error documented without a constant, or a constant without a section,
// fails. The constants are read from the source, so none can be left out.
func TestProblemTypesAreTheDocumentedOnes(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "problem.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var constants []string
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Values) != 1 {
			return true
		}
		sum, ok := spec.Values[0].(*ast.BinaryExpr)
		if !ok || sum.X.(*ast.Ident).Name != "TypeBase" {
			return true
		}
		lit, err := strconv.Unquote(sum.Y.(*ast.BasicLit).Value)
		if err != nil {
			t.Fatal(err)
		}
		constants = append(constants, lit)
		return true
	})
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, errorsSection, ok := strings.Cut(string(doc), "\n## Errors\n")
	if !ok {
		t.Fatal("docs/api.md has no Errors section")
	}
	errorsSection, _, _ = strings.Cut(errorsSection, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^### ([a-z-]+)$`).FindAllStringSubmatch(errorsSection, -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(constants)
	slices.Sort(documented)
	if len(documented) < 10 || !slices.Equal(constants, documented) {
		t.Fatalf("problem type constants %v\ndocs/api.md error sections %v", constants, documented)
	}
}
