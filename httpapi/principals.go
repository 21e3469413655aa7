package httpapi

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
	"gopkg.in/yaml.v3"
)

// Role is one permission of a principal.
type Role uint8

const (
	RolePublisher Role = 1 << iota
	RoleClient
	RoleOperator
)

// Roles is a set of roles.
type Roles uint8

func (r Roles) Has(x Role) bool { return r&Roles(x) != 0 }

var roleNames = [...]struct {
	role Role
	name string
}{{RolePublisher, "publisher"}, {RoleClient, "client"}, {RoleOperator, "operator"}}

// Principal is an authenticated caller. Global is set for an operator of
// tenant `*`, who acts in every tenant; Tenant is then empty.
type Principal struct {
	Subject engine.Subject
	Tenant  engine.Tenant
	Global  bool
	Roles   Roles

	hash [sha256.Size]byte // SHA-256 of the bearer token
}

// Principals is an immutable set of principals indexed by token hash and by
// subject. It is safe for concurrent use.
type Principals struct {
	byHash    map[[sha256.Size]byte]*Principal
	bySubject map[engine.Subject]*Principal
}

// Len is the number of principals.
func (ps *Principals) Len() int { return len(ps.byHash) }

// Tenants returns the tenants of the set's principals, each once, in no
// particular order (a global principal has none).
func (ps *Principals) Tenants() []engine.Tenant {
	seen := map[engine.Tenant]bool{}
	var out []engine.Tenant
	for _, p := range ps.bySubject {
		if !p.Global && !seen[p.Tenant] {
			seen[p.Tenant] = true
			out = append(out, p.Tenant)
		}
	}
	return out
}

// Lookup returns the principal with subject s.
func (ps *Principals) Lookup(s engine.Subject) (*Principal, bool) {
	p, ok := ps.bySubject[s]
	return p, ok
}

// Authenticate finds the principal whose stored hash equals SHA-256(token).
// The map is keyed by the hash (it reveals nothing about the token); the
// final equality is checked in constant time. It does not allocate.
func (ps *Principals) Authenticate(token []byte) (*Principal, bool) {
	sum := sha256.Sum256(token)
	p := ps.byHash[sum]
	if p == nil {
		return nil, false
	}
	if subtle.ConstantTimeCompare(p.hash[:], sum[:]) != 1 {
		return nil, false
	}
	return p, true
}

// principalsFile is the on-disk format (docs/contracts/http.md#principals), in JSON or YAML.
type principalsFile struct {
	Principals []principalEntry `json:"principals" yaml:"principals"`
}

type principalEntry struct {
	Subject       string   `json:"subject" yaml:"subject"`
	GameID        string   `json:"game_id" yaml:"game_id"`
	EnvironmentID string   `json:"environment_id" yaml:"environment_id"`
	Roles         []string `json:"roles" yaml:"roles"`
	TokenSHA256   string   `json:"token_sha256" yaml:"token_sha256"`
}

// maxPrincipalsFile bounds the principals file's size.
const maxPrincipalsFile = 16 << 20

// LoadPrincipals reads a principals file: JSON when the name ends in .json
// or the content starts with '{', YAML otherwise (.yaml, .yml). Unknown
// fields, duplicate subjects or token hashes, and any invalid entry are
// errors naming the entry and field.
func LoadPrincipals(path string) (*Principals, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open principals file: %w", err)
	}
	defer f.Close() // read-only: a close error changes nothing
	data, err := io.ReadAll(io.LimitReader(f, maxPrincipalsFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read principals file %s: %w", path, err)
	}
	if len(data) > maxPrincipalsFile {
		return nil, fmt.Errorf("principals file %s is larger than %d bytes", path, maxPrincipalsFile)
	}
	ext := strings.ToLower(filepath.Ext(path))
	isJSON := ext == ".json" || (ext != ".yaml" && ext != ".yml" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")))
	ps, err := ParsePrincipals(data, isJSON)
	if err != nil {
		return nil, fmt.Errorf("principals file %s: %w", path, err)
	}
	return ps, nil
}

// ParsePrincipals parses principals from JSON (isJSON) or YAML.
func ParsePrincipals(data []byte, isJSON bool) (*Principals, error) {
	var pf principalsFile
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pf); err != nil {
			return nil, fmt.Errorf("cannot parse JSON: %w", err)
		}
		if dec.More() {
			return nil, errors.New("cannot parse JSON: data after the top-level object")
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&pf); err != nil {
			return nil, fmt.Errorf("cannot parse YAML: %w", err)
		}
	}
	return buildPrincipals(pf.Principals)
}

func buildPrincipals(entries []principalEntry) (*Principals, error) {
	if len(entries) == 0 {
		return nil, errors.New("no principals defined")
	}
	ps := &Principals{
		byHash:    make(map[[sha256.Size]byte]*Principal, len(entries)),
		bySubject: make(map[engine.Subject]*Principal, len(entries)),
	}
	for i, e := range entries {
		p, err := e.principal()
		if err != nil {
			return nil, fmt.Errorf("principal %d (subject %q): %w", i+1, truncate(e.Subject, 64), err)
		}
		if _, dup := ps.bySubject[p.Subject]; dup {
			return nil, fmt.Errorf("principal %d: subject %q is defined twice", i+1, truncate(e.Subject, 64))
		}
		if _, dup := ps.byHash[p.hash]; dup {
			return nil, fmt.Errorf("principal %d (subject %q): token_sha256 is the same as another principal's", i+1, truncate(e.Subject, 64))
		}
		ps.byHash[p.hash] = p
		ps.bySubject[p.Subject] = p
	}
	return ps, nil
}

func (e *principalEntry) principal() (*Principal, error) {
	p := &Principal{Subject: engine.Subject(e.Subject)}
	if err := p.Subject.Validate(); err != nil {
		return nil, err
	}
	for _, r := range e.Roles {
		found := false
		for _, rn := range roleNames {
			if r == rn.name {
				if p.Roles.Has(rn.role) {
					return nil, fmt.Errorf("roles: %q is listed twice", r)
				}
				p.Roles |= Roles(rn.role)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("roles: unknown role %q (want publisher, client or operator)", truncate(r, 32))
		}
	}
	if p.Roles == 0 {
		return nil, errors.New("roles: at least one role is required")
	}
	switch {
	case e.GameID == "*" && e.EnvironmentID == "*":
		if p.Roles != Roles(RoleOperator) {
			return nil, errors.New("game_id/environment_id: tenant * is only for operator-only principals")
		}
		p.Global = true
	case e.GameID == "*" || e.EnvironmentID == "*":
		return nil, errors.New("game_id/environment_id: * must be used for both or neither")
	default:
		p.Tenant = engine.Tenant{Game: e.GameID, Env: e.EnvironmentID}
		if err := p.Tenant.Validate(); err != nil {
			return nil, err
		}
	}
	if len(e.TokenSHA256) != 2*sha256.Size {
		return nil, errors.New("token_sha256: must be 64 hex characters (SHA-256 of the token)")
	}
	if _, err := hex.Decode(p.hash[:], []byte(e.TokenSHA256)); err != nil {
		return nil, errors.New("token_sha256: must be 64 hex characters (SHA-256 of the token)")
	}
	return p, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// DevTenant is the tenant of the --dev principals.
var DevTenant = engine.Tenant{Game: "demo", Env: "dev"}

// DevGlobalOperator is the tokens key of the --dev global operator.
const DevGlobalOperator = "global-operator"

// DevPrincipals makes a publisher, a client and an operator principal of
// tenant demo/dev and a global operator (tenant *), with fresh random
// tokens (subjects dev-publisher, dev-client, dev-operator,
// dev-global-operator). tokens is keyed by role name, and
// DevGlobalOperator; the caller prints them once at start and must not log
// them otherwise.
func DevPrincipals() (p *Principals, tokens map[string]string) {
	tokens = make(map[string]string, len(roleNames)+1)
	entries := make([]principalEntry, 0, len(roleNames)+1)
	add := func(name, game, env, role string) {
		var raw [32]byte
		_, _ = rand.Read(raw[:]) // never fails since Go 1.24: it crashes the process instead
		tok := base64.RawURLEncoding.EncodeToString(raw[:])
		sum := sha256.Sum256([]byte(tok))
		tokens[name] = tok
		entries = append(entries, principalEntry{
			Subject: "dev-" + name, GameID: game, EnvironmentID: env,
			Roles: []string{role}, TokenSHA256: hex.EncodeToString(sum[:]),
		})
	}
	for _, rn := range roleNames {
		add(rn.name, DevTenant.Game, DevTenant.Env, rn.name)
	}
	add(DevGlobalOperator, "*", "*", "operator")
	p, err := buildPrincipals(entries)
	if err != nil {
		panic("BUG: dev principals invalid: " + err.Error())
	}
	return p, tokens
}
