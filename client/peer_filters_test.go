package client

import (
	"regexp"
	"strings"
	"testing"
)

// TestPeerCLIFilters: hosts publish attributes and player counts with
// `rendezvous-peer host --attr`; `join --first` with "not full, mode =
// coop, most players first" joins the busiest coop host with room, `join
// --quick` lets the server choose, and a quick join nothing matches exits
// 5.
func TestPeerCLIFilters(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv := startServer(t, nil, append(storeArgs, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0")...)
		host := func(name string, args ...string) string {
			t.Helper()
			p := startPeer(t, nil, srv.tokens["publisher"], append([]string{"host", "--server", srv.http, "--name", name, "--echo",
				"--listen", "127.0.0.1:0"}, args...)...)
			return p.waitLine(t, publishedRe)
		}
		few := host("coop few", "--players", "1", "--attr", "mode=coop", "--attr", "level=3")
		many := host("coop many", "--players", "5", "--attr", "mode=coop", "--attr", "level=1")
		host("coop full", "--players", "4", "--max-players", "4", "--attr", "mode=coop", "--attr", "level=9")
		host("pvp", "--players", "7", "--attr", "mode=pvp")

		join := func(want int, args ...string) string {
			t.Helper()
			p := startPeer(t, nil, srv.tokens["client"], append([]string{"join", "--server", srv.http, "--listen", "127.0.0.1:0"}, args...)...)
			if code := p.wait(t); code != want {
				t.Fatalf("join %v exited %d, want %d:\n%s\n%s", args, code, want, p.stdout.String(), p.stderr.String())
			}
			return p.stdout.String() + p.stderr.String()
		}
		out := join(0, "--first", "--not-full", "--attr", "mode=coop", "--order", "-current_players", "--say", "hi", "--replies", "1")
		if !strings.Contains(out, "joining listing "+many+` ("coop many", 5 of 8 players)`) || !strings.Contains(out, "host says: echo: hi") {
			t.Fatalf("join --first with filters:\n%s", out)
		}
		out = join(0, "--quick", "--attr", "mode=coop", "--attr", "level.ge=2", "--say", "hey", "--replies", "1")
		if !strings.Contains(out, "quick join chose listing "+few+"\n") || !strings.Contains(out, "host says: echo: hey") {
			t.Fatalf("join --quick:\n%s", out)
		}
		out = join(exitCodeNoListings, "--quick", "--attr", "mode=ctf")
		if !regexp.MustCompile(`no listing matches`).MatchString(out) {
			t.Fatalf("join --quick that nothing matches:\n%s", out)
		}
	})
}

// exitCodeNoListings is rendezvous-peer's exit code when --first or
// --quick finds nothing.
const exitCodeNoListings = 5
