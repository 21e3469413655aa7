package httpapi

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const tokCli2 = "token-client-demo-dev-0002"

// principalsDoc is a principals file with the given entries: subject,
// game, env, role, token each.
func principalsDoc(entries ...[5]string) string {
	var parts []string
	for _, e := range entries {
		parts = append(parts, `{"subject":"`+e[0]+`","game_id":"`+e[1]+`","environment_id":"`+e[2]+
			`","roles":["`+e[3]+`"],"token_sha256":"`+tokenHash(e[4])+`"}`)
	}
	return `{"principals":[` + strings.Join(parts, ",") + `]}`
}

var (
	entPub    = [5]string{"pub-1", "demo", "dev", "publisher", tokPub}
	entCli    = [5]string{"cli-1", "demo", "dev", "client", tokCli}
	entCli2   = [5]string{"cli-2", "demo", "dev", "client", tokCli2}
	entOp     = [5]string{"op-1", "demo", "dev", "operator", tokOp}
	entGlobal = [5]string{"gop", "*", "*", "operator", tokGlobalOp}
)

// reloadHarness serves the principals of a file it returns the path of.
func reloadHarness(t *testing.T, doc string) (*harness, string) {
	t.Helper()
	file := writeFile(t, "principals.json", doc)
	ps, err := LoadPrincipals(file)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, testLimits(), func(c *Config) { c.Principals, c.PrincipalsFile = ps, file })
	return h, file
}

// rewrite replaces the content of the file at path.
func rewrite(t *testing.T, path, doc string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

func whoami(tok string) req { return req{method: "GET", path: "/v1/whoami", token: tok} }

var reloadReq = func(tok string) req { return req{method: "POST", path: "/v1/admin/principals/reload", token: tok} }

// TestReloadPrincipals: a reload replaces the principal set at once (the
// removed principal gets 401 with its next request, the added one is
// served) and leaves every listing as it was; only a global operator may
// ask for it.
func TestReloadPrincipals(t *testing.T) {
	h, file := reloadHarness(t, principalsDoc(entPub, entCli, entOp, entGlobal))
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.expect(whoami(tokCli), 200, "")
	h.rejected(whoami(tokCli2), 401, "unauthorized")

	rewrite(t, file, principalsDoc(entPub, entCli2, entOp, entGlobal))
	// A tenant operator, a publisher: refused, nothing reloaded.
	h.rejected(reloadReq(tokOp), 403, "forbidden")
	h.rejected(reloadReq(tokPub), 403, "forbidden")
	h.expect(whoami(tokCli), 200, "")

	before := h.store.Snapshot()
	r := h.expect(reloadReq(tokGlobalOp), 200, "")
	if r.num("loaded") != 4 {
		t.Fatalf("reload answered %s, want loaded 4", r.body)
	}
	if after := h.store.Snapshot(); after != before {
		t.Fatalf("a reload changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	h.rejected(whoami(tokCli), 401, "unauthorized")
	if r := h.expect(whoami(tokCli2), 200, ""); r.str("subject") != "cli-2" {
		t.Fatalf("whoami %s", r.body)
	}
	h.expect(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli2}, 200, "")
	if !strings.Contains(h.logs.String(), `"msg":"principals reloaded"`) {
		t.Fatalf("no reload log line:\n%s", h.logs.String())
	}
}

// TestReloadRefusesBadFile: every kind of bad file is refused with 422
// principals_invalid naming the reason; the previous set stays in force and
// the log names the reason without any token hash.
func TestReloadRefusesBadFile(t *testing.T) {
	good := principalsDoc(entPub, entCli, entGlobal)
	h, file := reloadHarness(t, good)
	f := func(doc, wantDetail string) {
		t.Helper()
		rewrite(t, file, doc)
		r := h.rejected(reloadReq(tokGlobalOp), 422, "principals_invalid")
		if !strings.Contains(r.str("detail"), wantDetail) {
			t.Fatalf("detail %q, want it to name %q", r.str("detail"), wantDetail)
		}
		h.expect(whoami(tokCli), 200, "")
		h.rejected(whoami(tokCli2), 401, "unauthorized")
	}
	f(`{"principals":[`, "cannot parse JSON")
	f(`{"principals":[]}`, "no principals defined")
	f(principalsDoc(entPub, entCli, entCli2, entGlobal, entCli), "defined twice")
	f(strings.Replace(principalsDoc(entCli2, entGlobal), `"client"`, `"player"`, 1), "unknown role")
	f(strings.Replace(principalsDoc(entCli2, entGlobal), tokenHash(tokCli2), "abc", 1), "token_sha256")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	h.rejected(reloadReq(tokGlobalOp), 422, "principals_invalid")
	h.expect(whoami(tokCli), 200, "")

	logs := h.logs.String()
	if n := strings.Count(logs, `"msg":"principals reload refused; the previous principals stay in force"`); n != 6 {
		t.Fatalf("%d refusal log lines, want 6:\n%s", n, logs)
	}
	for _, tok := range []string{tokPub, tokCli, tokCli2, tokGlobalOp} {
		if strings.Contains(logs, tok) || strings.Contains(logs, tokenHash(tok)) {
			t.Fatalf("the log shows a token or its hash:\n%s", logs)
		}
	}
}

// TestReloadWithoutFile: a server started without a principals file (--dev)
// has nothing to reload: 409 not_reloadable, principals unchanged.
func TestReloadWithoutFile(t *testing.T) {
	h := newHarness(t, testLimits())
	h.rejected(reloadReq(tokGlobalOp), 409, "not_reloadable")
	h.expect(whoami(tokCli), 200, "")
	if _, err := h.api.ReloadPrincipals("SIGHUP"); err != ErrNotReloadable {
		t.Fatalf("ReloadPrincipals: %v, want ErrNotReloadable", err)
	}
}

// TestReloadRacesAuthentication: requests authenticate while the set is
// swapped back and forth. A principal present in both sets is always
// served; one present in only one set gets 200 or 401, never anything else.
func TestReloadRacesAuthentication(t *testing.T) {
	a, b := principalsDoc(entCli, entGlobal), principalsDoc(entCli, entCli2, entGlobal)
	h, file := reloadHarness(t, a)
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for _, tok := range []string{tokCli, tokCli2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000 && !stop.Load(); i++ {
				r := h.do(whoami(tok))
				if r.status != 200 && (tok == tokCli || r.status != 401) {
					errs <- tok + ": status " + itoa(r.status)
					return
				}
			}
		}()
	}
	for i := range 50 {
		doc := a
		if i%2 == 0 {
			doc = b
		}
		rewrite(t, file, doc)
		if _, err := h.api.ReloadPrincipals("test"); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
