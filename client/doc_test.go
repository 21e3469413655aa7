package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestSDKDocMatchesExamples: every Go code block of docs/sdk.md is the body
// of one of the examples (which compile and run with checked output), in
// the order of exampleNames, so the guide cannot drift from working code.
func TestSDKDocMatchesExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/sdk.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(doc, -1) {
		blocks = append(blocks, string(m[1]))
	}
	bodies := exampleBodies(t, "example_test.go")
	if len(blocks) != len(exampleNames) {
		t.Fatalf("docs/sdk.md has %d Go blocks, want %d (one per example: %v)", len(blocks), len(exampleNames), exampleNames)
	}
	for i, name := range exampleNames {
		body, ok := bodies[name]
		if !ok {
			t.Fatalf("example_test.go has no %s", name)
		}
		if blocks[i] != body {
			t.Errorf("docs/sdk.md Go block %d differs from the body of %s.\ndoc:\n%s\nexample:\n%s", i+1, name, blocks[i], body)
		}
	}
}

// exampleBodies returns each Example function's body as it reads at the
// top level: without the braces and with one level of indentation removed.
func exampleBodies(t *testing.T, file string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fd.Name.Name, "Example") {
			continue
		}
		body := string(src[fset.Position(fd.Body.Lbrace).Offset+1 : fset.Position(fd.Body.Rbrace).Offset])
		var b strings.Builder
		for _, line := range strings.Split(strings.Trim(body, "\n"), "\n") {
			b.WriteString(strings.TrimPrefix(line, "\t"))
			b.WriteByte('\n')
		}
		out[fd.Name.Name] = b.String()
	}
	return out
}
