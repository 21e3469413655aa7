package httpapi

import (
	"strings"
	"testing"
)

// TestPrincipalsDigest: the digest depends on the principals, not on the
// file's format, order or case of hex; any change of a subject, tenant,
// role or token changes it; it never shows a token hash.
func TestPrincipalsDigest(t *testing.T) {
	parse := func(doc string, isJSON bool) string {
		t.Helper()
		ps, err := ParsePrincipals([]byte(doc), isJSON)
		if err != nil {
			t.Fatal(err)
		}
		return ps.Digest()
	}
	entry := func(subject, game, role, token string) string {
		return `{"subject":"` + subject + `","game_id":"` + game + `","environment_id":"` + game +
			`","roles":["` + role + `"],"token_sha256":"` + tokenHash(token) + `"}`
	}
	base := parse(`{"principals":[`+entry("pub-1", "demo", "publisher", "t1")+`,`+entry("ops", "*", "operator", "t2")+`]}`, true)
	if len(base) != digestLen || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("digest %q is not %d hex characters", base, digestLen)
	}
	same := parse(`principals:
  - {subject: ops, game_id: "*", environment_id: "*", roles: [operator], token_sha256: `+strings.ToUpper(tokenHash("t2"))+`}
  - {subject: pub-1, game_id: demo, environment_id: demo, roles: [publisher], token_sha256: `+tokenHash("t1")+`}
`, false)
	if same != base {
		t.Errorf("the same principals in YAML, reordered: digest %s, want %s", same, base)
	}
	for name, doc := range map[string]string{
		"subject": entry("pub-2", "demo", "publisher", "t1"),
		"tenant":  entry("pub-1", "other", "publisher", "t1"),
		"role":    entry("pub-1", "demo", "client", "t1"),
		"token":   entry("pub-1", "demo", "publisher", "t3"),
	} {
		if d := parse(`{"principals":[`+doc+`,`+entry("ops", "*", "operator", "t2")+`]}`, true); d == base {
			t.Errorf("another %s, the same digest %s", name, d)
		}
	}
	for _, tok := range []string{"t1", "t2"} {
		if strings.Contains(tokenHash(tok), base) {
			t.Errorf("the digest is part of a token hash")
		}
	}
}
