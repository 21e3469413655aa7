package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

// reloadTokens are the bearer tokens of the principals the reload tests
// write into a principals file.
var reloadTokens = map[string]string{
	"pub-1": "reload-publisher-token-000001", "cli-1": "reload-client-token-0000001",
	"cli-2": "reload-client-token-0000002", "gop": "reload-global-operator-token1",
	"op-1": "reload-tenant-operator-token1",
}

// writeReloadPrincipals writes the principals file with the named subjects
// of reloadTokens.
func writeReloadPrincipals(t *testing.T, path string, subjects ...string) {
	t.Helper()
	roles := map[string]string{"pub-1": "publisher", "cli-1": "client", "cli-2": "client", "gop": "operator", "op-1": "operator"}
	var entries []e2e.Principal
	for _, s := range subjects {
		game, env := "demo", "prod"
		if s == "gop" {
			game, env = "*", "*"
		}
		entries = append(entries, e2e.NewPrincipal(s, game, env, roles[s], reloadTokens[s]))
	}
	writeRaw(t, path, string(e2e.PrincipalsJSON(t, entries)))
}

func writeRaw(t *testing.T, path, doc string) {
	t.Helper()
	// Write-and-rename, as an operator's deploy tool would: the server never
	// reads a half-written file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitLogged waits (bounded) until the log holds n lines with msg.
func (p *proc) waitLogged(msg string, n int) {
	p.t.Helper()
	for range 400 {
		got := 0
		for _, m := range p.logLines() {
			if m["msg"] == msg {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("no %d log lines %q; log:\n%s", n, msg, p.stderr.String())
}

func (p *proc) status(subject string) int {
	p.t.Helper()
	return p.call("GET", "/v1/whoami", reloadTokens[subject], nil).status
}

// TestE2EReloadPrincipals: the real binary re-reads its principals file on
// SIGHUP and on the reload route. An added principal is served, a removed
// one gets 401 at once, a listing (and its presence) survives every reload,
// and a bad file is refused with the previous principals kept.
func TestE2EReloadPrincipals(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		file := filepath.Join(t.TempDir(), "principals.json")
		writeReloadPrincipals(t, file, "pub-1", "cli-1", "gop", "op-1")
		p := startProc(t, append(storeArgs, "--principals", file)...)
		p.tokens = map[string]string{"publisher": reloadTokens["pub-1"], "client": reloadTokens["cli-1"]}
		h := publishHost(t, p, "reload-1", "Reload host")
		listing := "/v1/listings/" + h.pub.ListingID
		p.call("GET", listing, reloadTokens["cli-1"], nil).expect(t, "get before reload", http.StatusOK, nil)

		// SIGHUP: cli-1 removed, cli-2 added.
		writeReloadPrincipals(t, file, "pub-1", "cli-2", "gop", "op-1")
		p.signal(syscall.SIGHUP)
		p.waitLogged("principals reloaded", 1)
		if got := p.logged("principals reloaded"); got["loaded"] != 4.0 || got["added"] != 1.0 || got["removed"] != 1.0 || got["by"] != "SIGHUP" {
			t.Fatalf("reload log line %v", got)
		}
		if s := p.status("cli-1"); s != http.StatusUnauthorized {
			t.Fatalf("removed principal: status %d, want 401", s)
		}
		h.refresh() // the listing's presence is still known to the mediator
		p.call("GET", listing, reloadTokens["cli-2"], nil).expect(t, "get after SIGHUP reload", http.StatusOK, nil)

		// A bad file on SIGHUP: refused, the previous set stays.
		writeRaw(t, file, `{"principals":[{"subject":"cli-1"}]}`)
		p.signal(syscall.SIGHUP)
		p.waitLogged("principals reload refused; the previous principals stay in force", 1)
		if p.status("cli-2") != http.StatusOK || p.status("cli-1") != http.StatusUnauthorized {
			t.Fatal("a refused file changed the principals")
		}

		// The route: a tenant operator may not; a global operator may.
		writeReloadPrincipals(t, file, "pub-1", "cli-1", "gop", "op-1")
		reload := func(subject string) httpReply {
			return p.call("POST", "/v1/admin/principals/reload", reloadTokens[subject], nil)
		}
		if r := reload("op-1"); r.status != http.StatusForbidden || r.problemCode(t) != "forbidden" {
			t.Fatalf("tenant operator reload: %d %s", r.status, r.body)
		}
		if p.status("cli-1") != http.StatusUnauthorized {
			t.Fatal("a refused reload request reloaded")
		}
		var loaded struct{ Loaded int }
		reload("gop").expect(t, "global operator reload", http.StatusOK, &loaded)
		if loaded.Loaded != 4 || p.status("cli-1") != http.StatusOK || p.status("cli-2") != http.StatusUnauthorized {
			t.Fatalf("after the route's reload: loaded %d, cli-1 %d, cli-2 %d", loaded.Loaded, p.status("cli-1"), p.status("cli-2"))
		}
		writeRaw(t, file, "principals: [")
		if r := reload("gop"); r.status != http.StatusUnprocessableEntity || r.problemCode(t) != "principals_invalid" {
			t.Fatalf("bad file through the route: %d %s", r.status, r.body)
		}
		if p.status("cli-1") != http.StatusOK {
			t.Fatal("a refused file changed the principals")
		}
		h.refresh()
		p.call("GET", listing, reloadTokens["cli-1"], nil).expect(t, "get after every reload", http.StatusOK, nil)

		var secrets []string
		for _, tok := range reloadTokens {
			sum := sha256.Sum256([]byte(tok))
			secrets = append(secrets, tok, hex.EncodeToString(sum[:]))
		}
		p.assertNoSecrets(secrets, nil)
		p.signal(syscall.SIGTERM)
		if code := p.wait(); code != exitOK {
			t.Fatalf("exit status %d", code)
		}
	})
}

// TestE2EHangupWithoutPrincipalsFile: under --dev a SIGHUP is logged and
// ignored (it used to end the process: SIGHUP's default action).
func TestE2EHangupWithoutPrincipalsFile(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		p.signal(syscall.SIGHUP)
		p.waitLogged("SIGHUP ignored: no principals file to reload (started with --dev)", 1)
		p.call("GET", "/v1/whoami", p.tokens["client"], nil).expect(t, "whoami after SIGHUP", http.StatusOK, nil)
		p.signal(syscall.SIGTERM)
		if code := p.wait(); code != exitOK {
			t.Fatalf("exit status %d", code)
		}
	})
}
