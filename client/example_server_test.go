package client

import (
	"flag"
	"os"
	"regexp"
	"strings"
)

// exampleNames are the examples of example_test.go, which run against a
// real server.
var exampleNames = []string{"Example_host", "Example_join", "Example_errors"}

// serveExamples starts a --dev server for the examples when the -run
// pattern selects any, and points them at it through the environment
// variables they (and so docs/sdk.md) read: RDV_SERVER, RDV_HOST_TOKEN and
// RDV_PLAYER_TOKEN.
func serveExamples() (stop func(), err error) {
	if !examplesSelected() {
		return func() {}, nil
	}
	s, err := launchServer(nil, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0")
	if err != nil {
		if s != nil {
			s.stop() // the start already failed; its error is the one to report
		}
		return nil, err
	}
	os.Setenv("RDV_SERVER", s.http)
	os.Setenv("RDV_HOST_TOKEN", s.tokens["publisher"])
	os.Setenv("RDV_PLAYER_TOKEN", s.tokens["client"])
	return func() { s.stop() }, nil // a server that will not stop is killed by stop
}

// examplesSelected reports whether -test.run selects an example (the test
// binary runs examples only if they match it).
func examplesSelected() bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	re, err := regexp.Compile(strings.SplitN(f.Value.String(), "/", 2)[0])
	if err != nil {
		return false
	}
	for _, n := range exampleNames {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}
