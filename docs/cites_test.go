package docs

import (
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Code comments cite the documentation by repository path and heading
// anchor, e.g. (docs/contracts/semantics.md#quotas). The checks below keep
// every such citation pointing at a heading that exists, and keep the
// repository from citing documents it does not hold.

// citedDoc matches a path to a Markdown file, with an optional #anchor.
var citedDoc = regexp.MustCompile(`[A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)+\.md(?:#[A-Za-z0-9_-]+)?`)

// outsideDoc matches a reference to a design document kept outside the
// repository: its pages in docs/contracts replace it.
var outsideDoc = regexp.MustCompile(`CONTRACT\.md|\.\./shared/|shared/(?:design|reference)/`)

// skipDir names directories that hold no source of the repository: VCS and
// tool state, build and bench output, test fixtures.
func skipDir(rel string, name string) bool {
	return strings.HasPrefix(name, ".") && name != "." && name != ".." ||
		name == "testdata" || name == "node_modules" || rel == "bin" || rel == filepath.Join("bench", "out")
}

// repoFiles lists the files under root whose names end in one of exts,
// whatever files the tree holds now (files move between packages).
func repoFiles(root string, exts ...string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p != root && skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				files = append(files, p)
			}
		}
		return nil
	})
	return files, err
}

// comment is one comment's text and the line it starts on.
type comment struct {
	line int
	text string
}

// goComments returns the comments of a Go file. Strings are not comments:
// a test may hold any path in a string.
func goComments(src []byte) []comment {
	fset := token.NewFileSet()
	f := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, scanner.ScanComments)
	var out []comment
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			out = append(out, comment{fset.Position(pos).Line, lit})
		}
	}
}

// luaComments returns the text after "--" on each line of a Lua file.
func luaComments(src []byte) []comment {
	var out []comment
	for n, l := range strings.Split(string(src), "\n") {
		if _, c, ok := strings.Cut(l, "--"); ok {
			out = append(out, comment{n + 1, c})
		}
	}
	return out
}

// checkCites reports, for the tree at root, every Go or Lua comment that
// cites a Markdown file that does not exist or an anchor its headings do
// not make, and every source, script or Markdown file (Go, Lua, C, C#,
// shell, Makefile) that names a design document outside the repository. A cited path is taken relative to root, else to
// the citing file's directory.
func checkCites(root string) ([]string, error) {
	files, err := repoFiles(root, ".go", ".lua", ".md", ".c", ".h", ".cs", ".sh", "Makefile")
	if err != nil {
		return nil, err
	}
	var problems []string
	anchorsOf := map[string]map[string]bool{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, file)
		for n, l := range strings.Split(string(src), "\n") {
			if m := outsideDoc.FindString(l); m != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: names %s, outside the repository; cite docs/contracts instead", rel, n+1, m))
			}
		}
		var comments []comment
		switch filepath.Ext(file) {
		case ".go":
			comments = goComments(src)
		case ".lua":
			comments = luaComments(src)
		}
		for _, c := range comments {
			for i, l := range strings.Split(url.ReplaceAllString(c.text, ""), "\n") {
				for _, cite := range citedDoc.FindAllString(l, -1) {
					if p := resolveCite(root, file, cite, anchorsOf); p != "" {
						problems = append(problems, fmt.Sprintf("%s:%d: cites %s: %s", rel, c.line+i, cite, p))
					}
				}
			}
		}
	}
	return problems, nil
}

// resolveCite returns what is wrong with one citation, or "".
func resolveCite(root, file, cite string, anchorsOf map[string]map[string]bool) string {
	path, anchor, _ := strings.Cut(cite, "#")
	resolved := ""
	for _, base := range []string{root, filepath.Dir(file)} {
		if _, err := os.Stat(filepath.Join(base, path)); err == nil {
			resolved = filepath.Join(base, path)
			break
		}
	}
	if resolved == "" {
		return "no such file"
	}
	if anchor == "" {
		return ""
	}
	a, ok := anchorsOf[resolved]
	if !ok {
		var err error
		if a, err = headingAnchors(resolved); err != nil {
			return err.Error()
		}
		anchorsOf[resolved] = a
	}
	if !a[anchor] {
		return "no heading with anchor #" + anchor
	}
	return ""
}

// TestCitesResolve: every document path and anchor a Go or Lua comment
// cites exists, and nothing names a design document outside the
// repository.
func TestCitesResolve(t *testing.T) {
	problems, err := checkCites("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCitesCheckerFails: the checker reports a missing file, a missing
// anchor and a name of an outside document, and accepts good citations in
// Go and Lua comments, so TestCitesResolve can fail.
func TestCitesCheckerFails(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outside := "CONTRACT" + ".md"
	write("docs/contracts/semantics.md", "# Semantics\n\n## Ceilings\n\n### Idempotent creation\n")
	write("engine/limits.go", "package engine\n\n"+
		"// Default ceilings (docs/contracts/semantics.md#ceilings).\n"+
		"const a = 1 // see docs/contracts/semantics.md#idempotent-creation\n"+
		"/* docs/contracts/semantics.md */\n"+
		"const s = \"docs/contracts/gone.md#nowhere\" // a string is not a citation\n"+
		"// Quotas (docs/contracts/semantics.md#quotas).\n"+
		"// Gone (docs/contracts/old.md).\n"+
		"// Was "+outside+" section 1.\n")
	write("engine/redisstore/scripts/prelude.lua", "-- ok: docs/contracts/semantics.md#ceilings\n"+
		"local x = 1 -- docs/contracts/semantics.md#ceiling\n")
	write("engine/storetest/FINDINGS.md", "Notes: "+outside+" section 7.7 says so.\n")
	up := ".." + "/"
	write("sdk/c/rdv.h", "/* the wire of "+up+"shared"+"/design/x */\n")
	got, err := checkCites(root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{
		"engine/limits.go:7: cites docs/contracts/semantics.md#quotas: no heading with anchor #quotas",
		"engine/limits.go:8: cites docs/contracts/old.md: no such file",
		"engine/limits.go:9: names " + outside + ", outside the repository; cite docs/contracts instead",
		"engine/redisstore/scripts/prelude.lua:2: cites docs/contracts/semantics.md#ceiling: no heading with anchor #ceiling",
		"engine/storetest/FINDINGS.md:1: names " + outside + ", outside the repository; cite docs/contracts instead",
		"sdk/c/rdv.h:1: names " + up + "shared/, outside the repository; cite docs/contracts instead",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
