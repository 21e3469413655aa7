package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func TestMakePrincipals(t *testing.T) {
	p, tk, err := makePrincipals("demo", "dev", 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	var pf struct {
		Principals []principalEntry `json:"principals"`
	}
	var tok Tokens
	if err := json.Unmarshal(p, &pf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(tk, &tok); err != nil {
		t.Fatal(err)
	}
	if len(pf.Principals) != 6 || len(tok.Publishers) != 3 || len(tok.Clients) != 2 || tok.Operator == "" {
		t.Fatalf("got %d principals, %d publishers, %d clients", len(pf.Principals), len(tok.Publishers), len(tok.Clients))
	}
	hash := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	byHash := map[string]principalEntry{}
	for _, e := range pf.Principals {
		byHash[e.TokenSHA256] = e
	}
	f := func(tok, role, game string) {
		t.Helper()
		e, ok := byHash[hash(tok)]
		if !ok || len(e.Roles) != 1 || e.Roles[0] != role || e.GameID != game {
			t.Fatalf("token for %s not found or wrong: %+v", role, e)
		}
		if _, ok := engine.ParseToken(tok); !ok {
			t.Fatal("token is not 43 base64url characters")
		}
	}
	f(tok.Operator, "operator", "*")
	for _, p := range tok.Publishers {
		f(p, "publisher", "demo")
	}
	for _, c := range tok.Clients {
		f(c, "client", "demo")
	}
}

func TestRunPrincipalsAndLoadTokens(t *testing.T) {
	dir := t.TempDir()
	pOut, tOut := filepath.Join(dir, "p.json"), filepath.Join(dir, "t.json")
	if err := runPrincipals([]string{"--publishers", "2", "--clients", "1", "--principals-out", pOut, "--tokens-out", tOut}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(tOut); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file mode: %v %v", st.Mode(), err)
	}
	cfg := defaultConfig()
	cfg.TokensFile = tOut
	tok, err := loadTokens(&cfg)
	if err != nil || len(tok.Publishers) != 2 || len(tok.Clients) != 1 {
		t.Fatalf("loadTokens: %+v %v", tok, err)
	}
	cfg.Publishers, cfg.Joiners = 1, 1
	if tok, err := loadTokens(&cfg); err != nil || len(tok.Publishers) != 1 || len(tok.Clients) != 1 {
		t.Fatalf("--publishers 1 --joiners 1: %+v %v", tok, err)
	}
	var ce *ConfigError
	cfg.Publishers = 3
	if _, err := loadTokens(&cfg); !errors.As(err, &ce) || ce.Setting != "publishers" {
		t.Fatalf("3 publishers of 2: %v", err)
	}
	cfg.Publishers, cfg.Joiners = 0, 2
	if _, err := loadTokens(&cfg); !errors.As(err, &ce) || ce.Setting != "joiners" {
		t.Fatalf("2 joiners of 1: %v", err)
	}
	cfg.Joiners = 0
	if err := runPrincipals([]string{"--publishers", "0"}, io.Discard); !errors.As(err, &ce) {
		t.Fatalf("0 publishers: %v", err)
	}
	cfg.TokensFile = filepath.Join(dir, "none.json")
	if _, err := loadTokens(&cfg); err == nil {
		t.Fatal("missing tokens file accepted")
	}
	os.WriteFile(cfg.TokensFile, []byte(`{"publishers":["a"]}`), 0o600)
	if _, err := loadTokens(&cfg); !errors.As(err, &ce) || ce.Setting != "tokens" {
		t.Fatalf("tokens without a client: %v", err)
	}
}
