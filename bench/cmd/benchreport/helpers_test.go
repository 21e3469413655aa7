package main

import (
	"strings"
	"testing"
)

// wantLines fails t for each of wants that got, a rendered page or table,
// does not contain, showing got once.
func wantLines(t *testing.T, got string, wants ...string) {
	t.Helper()
	missing := false
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
			missing = true
		}
	}
	if missing {
		t.Logf("in:\n%s", got)
	}
}
