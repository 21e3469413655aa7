package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rendezvous/rendezvous/client"
)

// The filtered kinds against a real server: every filtered page passes
// its filters and order, every quick join lands on a listing of the mode
// asked and is bound by both peers, and their checks say so.
func TestFilteredKinds(t *testing.T) {
	load, httpAddr, tokens, pid := serverWithPrincipals(t)
	out := filepath.Join(t.TempDir(), "filters")
	b, err := exec.Command(load, "--mode", "load", "--http", httpAddr, "--tokens", tokens, "--listings", "150",
		"--duration", "3s", "--ramp", "1s", "--rate", "browse_filtered=40,quick_join=20",
		"--out", out, "--server-pid", pid, "--timeout", "20s").CombinedOutput()
	if err != nil {
		t.Fatalf("rendezvous-load: %v\n%s", err, tail(string(b), 40))
	}
	res := readResult(t, out)
	got := phaseOf(t, res, "load")
	if !res.Passed || got["browse_filtered"].OK == 0 || got["browse_filtered"].Errors != 0 ||
		got["quick_join"].OK == 0 || got["quick_join"].Errors != 0 || got["bind"].OK != 2*got["quick_join"].OK {
		t.Fatalf("passed %v, kinds %+v, checks %+v", res.Passed, got, res.Checks)
	}
	want := map[string]bool{"load.browse_filtered": true, "load.quick_join": true, "load.introductions": true}
	for _, c := range res.Checks {
		if want[c.Name] {
			if !c.OK || c.Skipped {
				t.Fatalf("check %s: %+v", c.Name, c)
			}
			delete(want, c.Name)
		}
	}
	if len(want) != 0 {
		t.Fatalf("checks missing: %v (checks %+v)", want, res.Checks)
	}
}

// misfits finds what a "not full, mode = m, most players first" page must
// not hold.
func TestMisfits(t *testing.T) {
	l := func(cur, max int, mode string) client.Listing {
		return client.Listing{CurrentPlayers: cur, MaxPlayers: max, Attributes: client.Attributes{"mode": mode}}
	}
	if n := misfits([]client.Listing{l(5, 8, "coop"), l(5, 8, "coop"), l(1, 8, "coop")}, "coop"); n != 0 {
		t.Fatalf("a good page has %d misfits", n)
	}
	if n := misfits([]client.Listing{l(8, 8, "coop"), l(2, 8, "pvp"), l(3, 8, "coop"), {MaxPlayers: 8}}, "coop"); n != 4 {
		t.Fatalf("full, other mode, out of order and no mode: %d misfits, want 4", n)
	}
}
