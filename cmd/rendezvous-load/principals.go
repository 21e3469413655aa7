package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Tokens is the tokens file the load tester reads (--tokens). It holds bearer
// tokens in clear: write it with mode 0600 and never print it.
type Tokens struct {
	Operator   string   `json:"operator"`
	Publishers []string `json:"publishers"`
	Clients    []string `json:"clients"`
}

// principalEntry is one entry of the server's principals file (docs/contracts/http.md#principals).
type principalEntry struct {
	Subject       string   `json:"subject"`
	GameID        string   `json:"game_id"`
	EnvironmentID string   `json:"environment_id"`
	Roles         []string `json:"roles"`
	TokenSHA256   string   `json:"token_sha256"`
}

// loadTokens reads a tokens file, or builds one from single tokens.
func loadTokens(cfg *Config) (*Tokens, error) {
	t := &Tokens{}
	if cfg.TokensFile != "" {
		data, err := os.ReadFile(cfg.TokensFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read tokens file: %w", err)
		}
		if err := json.Unmarshal(data, t); err != nil {
			return nil, fmt.Errorf("cannot decode tokens file %s: %w", cfg.TokensFile, err)
		}
	}
	if cfg.Publisher != "" {
		t.Publishers = append(t.Publishers, cfg.Publisher)
	}
	if cfg.Client != "" {
		t.Clients = append(t.Clients, cfg.Client)
	}
	if cfg.Operator != "" {
		t.Operator = cfg.Operator
	}
	if cfg.Publishers > 0 {
		if cfg.Publishers > len(t.Publishers) {
			return nil, &ConfigError{"publishers", fmt.Sprintf("%d wanted, the tokens hold %d", cfg.Publishers, len(t.Publishers))}
		}
		t.Publishers = t.Publishers[:cfg.Publishers]
	}
	if cfg.Joiners > 0 {
		if cfg.Joiners > len(t.Clients) {
			return nil, &ConfigError{"joiners", fmt.Sprintf("%d wanted, the tokens hold %d", cfg.Joiners, len(t.Clients))}
		}
		t.Clients = t.Clients[:cfg.Joiners]
	}
	if len(t.Publishers) == 0 {
		return nil, &ConfigError{"tokens", "no publisher token"}
	}
	if len(t.Clients) == 0 {
		return nil, &ConfigError{"tokens", "no client token"}
	}
	return t, nil
}

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24: it crashes the process instead
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func tokenHash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// makePrincipals returns a principals file (hashes only) and the matching
// tokens file for n publishers, m clients and one global operator.
func makePrincipals(game, env string, n, m int) (principals []byte, tokens []byte, err error) {
	var pf struct {
		Principals []principalEntry `json:"principals"`
	}
	var t Tokens
	add := func(subject, g, e, role string) string {
		tok := newToken()
		pf.Principals = append(pf.Principals, principalEntry{subject, g, e, []string{role}, tokenHash(tok)})
		return tok
	}
	t.Operator = add("load-operator", "*", "*", "operator")
	for i := 0; i < n; i++ {
		t.Publishers = append(t.Publishers, add("load-pub-"+strconv.Itoa(i), game, env, "publisher"))
	}
	for i := 0; i < m; i++ {
		t.Clients = append(t.Clients, add("load-client-"+strconv.Itoa(i), game, env, "client"))
	}
	if principals, err = json.MarshalIndent(pf, "", " "); err != nil {
		return nil, nil, err
	}
	if tokens, err = json.MarshalIndent(t, "", " "); err != nil {
		return nil, nil, err
	}
	return principals, tokens, nil
}

// runPrincipals implements "rendezvous-load principals": it writes a
// principals file for the server and a tokens file for the load tester.
func runPrincipals(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rendezvous-load principals", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("publishers", 260, "publisher principals (the fill needs ceiling/owner-quota of them: 25,000/100 = 250)")
	m := fs.Int("clients", 4, "client principals")
	game := fs.String("game", "demo", "game_id of every principal but the operator")
	env := fs.String("env", "dev", "environment_id of every principal but the operator")
	pOut := fs.String("principals-out", "principals.json", "server principals file to write (token hashes only)")
	tOut := fs.String("tokens-out", "tokens.json", "load tester tokens file to write (secrets, mode 0600)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *n > 100000 || *m < 1 || *m > 100000 {
		return &ConfigError{"publishers/clients", "must be 1..100000"}
	}
	p, t, err := makePrincipals(*game, *env, *n, *m)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*pOut, p, 0o644); err != nil {
		return fmt.Errorf("cannot write principals file: %w", err)
	}
	if err := os.WriteFile(*tOut, t, 0o600); err != nil {
		return fmt.Errorf("cannot write tokens file: %w", err)
	}
	fmt.Fprintf(stderr, "wrote %s (%d principals) and %s\n", *pOut, *n+*m+1, *tOut)
	return nil
}
