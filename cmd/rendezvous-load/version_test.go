package main

import (
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/internal/version"
)

// TestVersion: --version prints the build's version line on stdout, exit 0.
func TestVersion(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"--version"}, &out, &errOut, false); code != exitOK ||
		out.String() != version.Line("rendezvous-load") || errOut.Len() != 0 {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
