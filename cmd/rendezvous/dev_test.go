package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevBannerPointsAtWalkthrough: a curl user learns that presence needs
// UDP and where the walkthrough that does it is, and where the API's
// description is; the files it names exist.
func TestDevBannerPointsAtWalkthrough(t *testing.T) {
	var b strings.Builder
	writeDevBanner(&b, "127.0.0.1:8080", "127.0.0.1:3478", map[string]string{"publisher": "p", "client": "c", "operator": "o"})
	out := b.String()
	for _, want := range []string{"docs/walkthrough.md", "http://127.0.0.1:8080/v1/openapi.json", "curl cannot send"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dev banner does not mention %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join("..", "..", "docs", "walkthrough.md")); err != nil {
		t.Errorf("the banner names docs/walkthrough.md: %v", err)
	}
}
