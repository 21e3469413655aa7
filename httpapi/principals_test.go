package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func tokenHash(tok string) string {
	s := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(s[:])
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPrincipals(t *testing.T) {
	jsonFile := `{"principals":[
 {"subject":"pub-1","game_id":"demo","environment_id":"dev","roles":["publisher"],"token_sha256":"` + tokenHash("tok-pub") + `"},
 {"subject":"ops","game_id":"*","environment_id":"*","roles":["operator"],"token_sha256":"` + strings.ToUpper(tokenHash("tok-ops")) + `"}]}`
	yamlFile := `principals:
  - subject: pub-1
    game_id: demo
    environment_id: dev
    roles: [publisher]
    token_sha256: ` + tokenHash("tok-pub") + `
  - subject: ops
    game_id: "*"
    environment_id: "*"
    roles: [operator]
    token_sha256: ` + tokenHash("tok-ops") + `
`
	f := func(name, content string) {
		t.Helper()
		ps, err := LoadPrincipals(writeFile(t, name, content))
		if err != nil {
			t.Fatalf("LoadPrincipals(%s): %v", name, err)
		}
		if ps.Len() != 2 {
			t.Fatalf("%s: %d principals, want 2", name, ps.Len())
		}
		p, ok := ps.Authenticate([]byte("tok-pub"))
		if !ok || p.Subject != "pub-1" || p.Tenant.Game != "demo" || p.Tenant.Env != "dev" || !p.Roles.Has(RolePublisher) || p.Roles.Has(RoleOperator) || p.Global {
			t.Fatalf("%s: publisher = %+v, %v", name, p, ok)
		}
		p, ok = ps.Authenticate([]byte("tok-ops"))
		if !ok || !p.Global || !p.Roles.Has(RoleOperator) {
			t.Fatalf("%s: operator = %+v, %v", name, p, ok)
		}
		if _, ok := ps.Authenticate([]byte("tok-pub ")); ok {
			t.Fatalf("%s: a wrong token authenticated", name)
		}
		if _, ok := ps.Authenticate(nil); ok {
			t.Fatalf("%s: an empty token authenticated", name)
		}
	}
	f("p.json", jsonFile)
	f("p.yaml", yamlFile)
	f("p.yml", yamlFile)
	f("principals", jsonFile) // sniffed
	f("principals", yamlFile)
}

func TestLoadPrincipalsErrors(t *testing.T) {
	entry := func(fields string) string { return `{"principals":[` + fields + `]}` }
	good := `"subject":"a","game_id":"g","environment_id":"e","roles":["client"],"token_sha256":"` + tokenHash("x") + `"`
	f := func(content, wantInError string) {
		t.Helper()
		_, err := LoadPrincipals(writeFile(t, "p.json", content))
		if err == nil || !strings.Contains(err.Error(), wantInError) {
			t.Fatalf("LoadPrincipals(%s): error %v, want one containing %q", content, err, wantInError)
		}
	}
	f(`{"principals":[]}`, "no principals")
	f(`{"principals":[{`+good+`,"extra":1}]}`, "unknown field")
	f(`{"principals":[{`+good+`}]} {}`, "after the top-level")
	f(`{`, "cannot parse JSON")
	f(entry(`{`+strings.Replace(good, `"subject":"a"`, `"subject":""`, 1)+`}`), "subject")
	f(entry(`{`+strings.Replace(good, `"game_id":"g"`, `"game_id":"G"`, 1)+`}`), "game_id")
	f(entry(`{`+strings.Replace(good, `"environment_id":"e"`, `"environment_id":""`, 1)+`}`), "environment_id")
	f(entry(`{`+strings.Replace(good, `["client"]`, `[]`, 1)+`}`), "roles")
	f(entry(`{`+strings.Replace(good, `["client"]`, `["admin"]`, 1)+`}`), "unknown role")
	f(entry(`{`+strings.Replace(good, `["client"]`, `["client","client"]`, 1)+`}`), "twice")
	f(entry(`{`+strings.Replace(good, tokenHash("x"), "abc", 1)+`}`), "token_sha256")
	f(entry(`{`+strings.Replace(good, tokenHash("x"), strings.Repeat("z", 64), 1)+`}`), "token_sha256")
	f(entry(`{`+strings.Replace(good, `"game_id":"g"`, `"game_id":"*"`, 1)+`}`), "both or neither")
	f(entry(`{`+strings.Replace(strings.Replace(good, `"game_id":"g","environment_id":"e"`, `"game_id":"*","environment_id":"*"`, 1), `"client"`, `"operator","client"`, 1)+`}`), "operator-only")
	f(entry(`{`+good+`},{`+strings.Replace(good, tokenHash("x"), tokenHash("y"), 1)+`}`), "defined twice")
	f(entry(`{`+good+`},{`+strings.Replace(good, `"subject":"a"`, `"subject":"b"`, 1)+`}`), "same as another")
	if _, err := LoadPrincipals(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("a missing file loaded")
	}
	_, err := LoadPrincipals(writeFile(t, "p.yaml", "principals:\n  - subject: a\n    bogus: 1\n"))
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("YAML unknown field: %v", err)
	}
}

func TestDevPrincipals(t *testing.T) {
	ps, tokens := DevPrincipals()
	if ps.Len() != 4 || len(tokens) != 4 {
		t.Fatalf("%d principals, %d tokens", ps.Len(), len(tokens))
	}
	for _, rn := range roleNames {
		p, ok := ps.Authenticate([]byte(tokens[rn.name]))
		if !ok || p.Roles != Roles(rn.role) || p.Tenant != DevTenant || p.Global {
			t.Fatalf("%s: %+v %v", rn.name, p, ok)
		}
	}
	p, ok := ps.Authenticate([]byte(tokens[DevGlobalOperator]))
	if !ok || p.Roles != Roles(RoleOperator) || !p.Global || p.Subject != "dev-global-operator" {
		t.Fatalf("global operator: %+v %v", p, ok)
	}
	_, again := DevPrincipals()
	if again["publisher"] == tokens["publisher"] {
		t.Fatal("dev tokens repeat across calls")
	}
}

// Tenants lists every tenant of the set once, and no global principal's.
func TestPrincipalsTenants(t *testing.T) {
	got := map[engine.Tenant]int{}
	for _, tn := range testPrincipals(t).Tenants() {
		got[tn]++
	}
	want := map[engine.Tenant]int{testTenant: 1, {Game: "other", Env: "dev"}: 1}
	if len(got) != len(want) || got[testTenant] != 1 || got[engine.Tenant{Game: "other", Env: "dev"}] != 1 {
		t.Fatalf("Tenants() = %v, want %v", got, want)
	}
}
