package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Principal is one entry of a principals file (docs/operations.md §3).
type Principal struct {
	Subject     string   `json:"subject"`
	GameID      string   `json:"game_id"`
	EnvID       string   `json:"environment_id"`
	Roles       []string `json:"roles"`
	TokenSHA256 string   `json:"token_sha256"`
}

// NewPrincipal is the entry of subject holding token.
func NewPrincipal(subject, game, env, role, token string) Principal {
	sum := sha256.Sum256([]byte(token))
	return Principal{subject, game, env, []string{role}, hex.EncodeToString(sum[:])}
}

// PrincipalsJSON is the principals file of entries.
func PrincipalsJSON(t testing.TB, entries []Principal) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		Principals []Principal `json:"principals"`
	}{entries})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WritePrincipalsFile writes the principals file of entries into a
// temporary directory of t and returns its path (mode 0600, as the server
// wants a file of token digests).
func WritePrincipalsFile(t testing.TB, entries []Principal) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "principals.json")
	if err := os.WriteFile(path, PrincipalsJSON(t, entries), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WritePrincipals writes a principals file of one entry per subject
// (subject -> game, env, role), each holding the token "tok-<subject>-…",
// and returns its path and each subject's token.
func WritePrincipals(t testing.TB, subjects map[string][3]string) (string, map[string]string) {
	t.Helper()
	var entries []Principal
	tokens := map[string]string{}
	for subject, p := range subjects {
		tok := "tok-" + subject + "-0123456789abcdef"
		tokens[subject] = tok
		entries = append(entries, NewPrincipal(subject, p[0], p[1], p[2], tok))
	}
	return WritePrincipalsFile(t, entries), tokens
}
