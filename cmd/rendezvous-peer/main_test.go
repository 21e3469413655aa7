package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/internal/version"
)

func TestUsageErrors(t *testing.T) {
	f := func(env map[string]string, want string, args ...string) {
		t.Helper()
		var out, errOut strings.Builder
		code := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
		if code != exitUsage {
			t.Fatalf("%v: exit %d, want %d (usage)\n%s", args, code, exitUsage, errOut.String())
		}
		if !strings.Contains(errOut.String(), want) {
			t.Fatalf("%v: stderr %q lacks %q", args, errOut.String(), want)
		}
		if out.Len() != 0 {
			t.Fatalf("%v: a refused command printed %q", args, out.String())
		}
	}
	f(nil, "usage")
	f(nil, "unknown command", "serve")
	f(nil, "--name is required", "host")
	f(nil, "exactly one of --listing ID, --first or --quick", "join")
	f(nil, "exactly one of --listing ID, --first or --quick", "join", "--first", "--listing", "x")
	f(nil, "exactly one of --listing ID, --first or --quick", "join", "--first", "--quick")
	f(nil, "filters and --order go with --first or --quick", "join", "--listing", "x", "--not-full")
	f(nil, "--quick has its own order", "join", "--quick", "--order", "-id")
	f(nil, `--attr "mode": want name=value or name.OP=N`, "join", "--first", "--attr", "mode")
	f(nil, `--attr "level.ge=x": level.ge takes an integer`, "join", "--first", "--attr", "level.ge=x")
	f(nil, "attributes", "host", "--name", "x", "--attr", "Mode=x")
	f(nil, "mode is given twice", "host", "--name", "x", "--attr", "mode=a", "--attr", "mode=b")
	f(nil, "--listing must be a UUID", "join", "--listing", "not-a-uuid", "--token", "t", "--listen", "127.0.0.1:0")
	f(nil, "unexpected arguments", "host", "--name", "x", "extra")
	f(map[string]string{"RDV_PROTOCOL": "seven"}, "RDV_PROTOCOL", "host", "--name", "x")
	f(nil, "flag provided but not defined", "host", "--bogus")
}

func TestEnvFillsFlags(t *testing.T) {
	var out, errOut strings.Builder
	// A server URL that is not http(s) is refused before anything is sent,
	// proving RDV_SERVER reached the flag; the flag would win over it.
	env := map[string]string{"RDV_SERVER": "ftp://nowhere", "RDV_TOKEN": "secret-token-xyz"}
	code := run(context.Background(), []string{"host", "--name", "x"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	if code != exitFailure || !strings.Contains(errOut.String(), "server URL") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if strings.Contains(errOut.String(), env["RDV_TOKEN"]) {
		t.Fatal("the token was printed")
	}
}

func TestChatDecode(t *testing.T) {
	f := func(in, kind string, id uint64, text string, ok bool) {
		t.Helper()
		k, i, tx, o := decode([]byte(in))
		if k != kind || i != id || tx != text || o != ok {
			t.Fatalf("decode(%q) = %q %d %q %v", in, k, i, tx, o)
		}
	}
	f("MSG 1 hello", "MSG", 1, "hello", true)
	f("MSG 42 two words", "MSG", 42, "two words", true)
	f("ACK 7", "ACK", 7, "", true)
	f("MSG 3 bell\a", "MSG", 3, "bell?", true)
	f("MSG x hi", "", 0, "", false)
	f("HELLO 1 x", "", 0, "", false)
	f("MSG", "", 0, "", false)
	f("MSG 123456789012345678901 x", "", 0, "", false)
	if got := string(encodeMsg(9, "hi")); got != "MSG 9 hi" {
		t.Fatalf("encodeMsg = %q", got)
	}
	if got := string(encodeAck(0)); got != "ACK 0" {
		t.Fatalf("encodeAck(0) = %q", got)
	}
	f(string(encodeAck(math.MaxUint64)), "ACK", math.MaxUint64, "", true)
}

// TestHelp: -h prints the command's flags and exits 0, sending nothing.
func TestHelp(t *testing.T) {
	f := func(cmd string) {
		t.Helper()
		var out, errOut strings.Builder
		code := run(context.Background(), []string{cmd, "-h"}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
		if code != exitOK || !strings.Contains(errOut.String(), "-punch-timeout") {
			t.Fatalf("%s -h: exit %d, stderr %q", cmd, code, errOut.String())
		}
		if !strings.HasPrefix(errOut.String(), "Usage of rendezvous-peer "+cmd+":\n") || out.Len() != 0 {
			t.Fatalf("%s -h: stdout %q, stderr %q: want only the flag usage", cmd, out.String(), errOut.String())
		}
	}
	f("host")
	f("join")
}

// TestVersion: --version prints the build's version line on stdout, exit 0.
func TestVersion(t *testing.T) {
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"--version"}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	if code != exitOK || out.String() != version.Line("rendezvous-peer") || errOut.Len() != 0 {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
