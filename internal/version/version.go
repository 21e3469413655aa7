// Package version tells which build of Rendezvous is running: the version
// printed by every command's --version and exported as
// rendezvous_build_info.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// override is set at link time by release builds:
//
//	go build -ldflags "-X github.com/rendezvous/rendezvous/internal/version.override=v1.2.0" ./cmd/...
var override string

// Version is the build's version: the -ldflags override when set, else the
// main module's version recorded by the go command (a tag, or a
// pseudo-version from version control), else "devel" plus the VCS revision
// when one was recorded. Only [0-9A-Za-z.+_-] are kept, so the value is
// safe in a metric label and a log line.
func Version() string {
	return clean(fromBuild(override))
}

func fromBuild(override string) string {
	if override != "" {
		return override
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel+" + s.Value[:12]
		}
	}
	return "devel"
}

// clean replaces every character outside [0-9A-Za-z.+_-] with '_'.
func clean(v string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z',
			r == '.', r == '+', r == '_', r == '-':
			return r
		}
		return '_'
	}, v)
}

// GoVersion is the Go toolchain that built the binary, e.g. "go1.26.8".
func GoVersion() string { return runtime.Version() }

// Line is what --version prints for program: its name, the version, the Go
// version and the platform, e.g. "rendezvous v1.2.0 go1.26.8 linux/amd64".
func Line(program string) string {
	return program + " " + Version() + " " + GoVersion() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
}

// Requested reports whether args asks for the version alone: exactly
// "--version" or "-version", the way the flag package spells a flag.
func Requested(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version")
}
