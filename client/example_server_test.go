package client

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// exampleNames are the examples of example_test.go, which run against a
// real server.
var exampleNames = []string{"Example_host", "Example_join", "Example_filters", "Example_relay", "Example_errors"}

// serveExamples starts, when the -run pattern selects any example, a
// coturn on loopback for the relay example and a --dev server granting
// credentials for it, and points the examples at the server through the
// environment variables they (and so docs/sdk.md) read: RDV_SERVER,
// RDV_HOST_TOKEN and RDV_PLAYER_TOKEN.
func serveExamples() (stop func(), err error) {
	if !examplesSelected() {
		return func() {}, nil
	}
	bin, err := exec.LookPath("turnserver")
	if err != nil {
		return nil, fmt.Errorf("the SDK examples need coturn's turnserver for the relay example (apt-get install coturn; .ci/run does)")
	}
	dir, err := os.MkdirTemp("", "rendezvous-examples-")
	if err != nil {
		return nil, err
	}
	const secret = "examples-turn-secret"
	port, err := freeLoopbackUDPPort()
	var turn *coturn
	if err == nil {
		turn, err = launchCoturn(bin, nil, netip.MustParseAddr("127.0.0.1"), port, secret, dir)
	}
	secretFile := filepath.Join(dir, "turn-secret")
	if err == nil {
		err = os.WriteFile(secretFile, []byte(secret+"\n"), 0o600)
	}
	var s *testServer
	if err == nil {
		s, err = launchServer(nil, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0",
			"--turn-uri", "turn:"+turn.addr.String()+"?transport=udp", "--turn-secret-file", secretFile,
			"--relay-allow-peers", "127.0.0.0/8") // the test relay is on loopback
	}
	stop = func() {
		if s != nil {
			s.stop() // a server that will not stop is killed by stop
		}
		if turn != nil {
			turn.stop()
		}
		os.RemoveAll(dir)
	}
	if err != nil {
		stop() // the start already failed; its error is the one to report
		return nil, err
	}
	os.Setenv("RDV_SERVER", s.http)
	os.Setenv("RDV_HOST_TOKEN", s.tokens["publisher"])
	os.Setenv("RDV_PLAYER_TOKEN", s.tokens["client"])
	return stop, nil
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
