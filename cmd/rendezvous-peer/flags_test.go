package main

import (
	"context"
	"strings"
	"testing"
)

// TestProtocolOutOfRange: protocol_version is 1..2^32-1 (docs/contracts/http.md#create-a-listing).
// A --protocol (or RDV_PROTOCOL) beyond it is a usage error, never silently
// wrapped to another protocol (4294967303 would become 7) and sent.
func TestProtocolOutOfRange(t *testing.T) {
	f := func(env map[string]string, args ...string) {
		t.Helper()
		var out, errOut strings.Builder
		code := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), "protocol") {
			t.Fatalf("%v %v: exit %d, want %d naming the protocol; stderr %q", env, args, code, exitUsage, errOut.String())
		}
		if out.Len() != 0 {
			t.Fatalf("%v: a refused command printed %q", args, out.String())
		}
	}
	// No token: without the range check the command fails later (exit 1)
	// on the token instead, having taken the wrapped value.
	f(nil, "join", "--first", "--protocol", "4294967303")
	f(nil, "host", "--name", "x", "--protocol", "4294967296")
	f(map[string]string{"RDV_PROTOCOL": "4294967303"}, "join", "--first")
}
