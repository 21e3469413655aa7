// Package docs holds the project's documentation; its tests check that
// every relative link of the repository's Markdown, and every document
// path and anchor a Go or Lua comment cites, resolves.
package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// inlineLink matches [text](target) and ![alt](target); the target ends at
// the first space (a title may follow) or closing parenthesis.
var inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// codeSpan matches inline code, whose brackets are not links.
var codeSpan = regexp.MustCompile("`[^`]*`")

// markdownFiles lists every .md file of the repository: README.md, docs/
// and those beside the code (repoFiles says which directories count).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := repoFiles("..", ".md")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// mdLines returns the lines of a Markdown file outside fenced code blocks.
func mdLines(t *testing.T, path string) []string {
	t.Helper()
	lines, err := readMDLines(path)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// readMDLines returns the lines of a Markdown file outside fenced code blocks.
func readMDLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// anchors returns the heading anchors of a Markdown file (headingAnchors).
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	out, err := headingAnchors(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// headingAnchors returns the heading anchors of a Markdown file as GitHub
// makes them: lowercase, punctuation dropped, spaces as hyphens, repeats
// numbered.
func headingAnchors(path string) (map[string]bool, error) {
	lines, err := readMDLines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		a := slug(strings.TrimSpace(strings.TrimLeft(l, "#")))
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out, nil
}

// slug is a heading's anchor before repeats are numbered.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestLinksResolve: every relative link of the repository's Markdown names
// an existing file or directory, and every #anchor into a Markdown file
// names one of its headings.
func TestLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files: %v", len(files), files)
	}
	checked := 0
	for _, file := range files {
		for n, line := range mdLines(t, file) {
			line = codeSpan.ReplaceAllString(line, "")
			for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link %q: %v", file, n+1, target, err)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchors(t, resolved)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", file, n+1, target, resolved, anchor)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link was checked")
	}
}

// TestAnchorsOfHeadings pins the anchor rule on headings the docs link to.
func TestAnchorsOfHeadings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.md")
	body := "# Title\n## 3. Principals file\n```\n# not a heading\n```\n### Presence refresh\n### Presence refresh\n## From deploy/ to a scraped, alerting service\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	got := anchors(t, p)
	for _, want := range []string{"title", "3-principals-file", "presence-refresh", "presence-refresh-1", "from-deploy-to-a-scraped-alerting-service"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a code block was taken for a heading")
	}
}

// url matches an absolute URL, whose path is not the repository's.
var url = regexp.MustCompile(`[a-z]+://\S+`)

// mentionedMD matches a Markdown file named in prose, such as "ADR.md" or
// "docs/operations.md".
var mentionedMD = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b`)

// TestMentionedFilesExist: a Markdown file named in the prose (not only in
// a link) exists, relative to the naming file, the repository or docs/, so
// no page sends a reader to a document the repository does not hold.
func TestMentionedFilesExist(t *testing.T) {
	for _, file := range markdownFiles(t) {
		for n, line := range mdLines(t, file) {
			for _, name := range mentionedMD.FindAllString(url.ReplaceAllString(line, ""), -1) {
				found := false
				for _, base := range []string{filepath.Dir(file), "..", "."} {
					if _, err := os.Stat(filepath.Join(base, name)); err == nil {
						found = true
					}
				}
				if !found {
					t.Errorf("%s:%d: names %s, which is not in the repository", file, n+1, name)
				}
			}
		}
	}
}
