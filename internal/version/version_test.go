package version

import (
	"runtime"
	"strings"
	"testing"
)

func TestOverrideWinsAndIsCleaned(t *testing.T) {
	if got := clean(fromBuild(`v1.2.0 "x"`)); got != "v1.2.0__x_" {
		t.Fatalf("override v1.2.0 \"x\" gives %q, want v1.2.0__x_", got)
	}
	if got := fromBuild("v9.9.9"); got != "v9.9.9" {
		t.Fatalf("override v9.9.9 gives %q", got)
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	// A test binary has no main module version: "devel", maybe with a
	// revision, never empty and never a character unsafe in a label.
	v := Version()
	if !strings.HasPrefix(v, "devel") && !strings.HasPrefix(v, "v") {
		t.Fatalf("Version() = %q, want devel… or a module version", v)
	}
	if clean(v) != v {
		t.Fatalf("Version() = %q holds characters outside [0-9A-Za-z.+_-]", v)
	}
}

func TestLine(t *testing.T) {
	want := "rendezvous " + Version() + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := Line("rendezvous"); got != want {
		t.Fatalf("Line = %q, want %q", got, want)
	}
}

func TestRequested(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}} {
		if !Requested(args) {
			t.Errorf("Requested(%q) = false", args)
		}
	}
	for _, args := range [][]string{nil, {"--dev"}, {"--version", "--dev"}, {"--principals", "--version"}, {"version"}} {
		if Requested(args) {
			t.Errorf("Requested(%q) = true", args)
		}
	}
}
