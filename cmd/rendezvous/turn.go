package main

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/httpapi"
	"github.com/rendezvous/rendezvous/internal/turncred"
)

// defaultTurnTTL is how long a relay credential stays valid by default.
const defaultTurnTTL = 10 * time.Minute

// turnConfig is the relay fallback's settings. Relay is enabled iff at
// least one URI and a secret file are given.
type turnConfig struct {
	URIs       []string
	SecretFile string
	// Secret is read from SecretFile by validate. Never logged.
	Secret []byte
	// SecretShared is set when SecretFile is readable by group or others
	// (start logs a warning).
	SecretShared bool
	TTL          time.Duration
	// PerMinute caps one principal's relay credentials a minute
	// (--relay-credentials-per-minute).
	PerMinute int
	// AllowPeers are the non-public ranges a relayed address may be in
	// (--relay-allow-peers): labs and tests only.
	AllowPeers []netip.Prefix
}

// Enabled reports whether relay credentials are issued.
func (t *turnConfig) Enabled() bool { return len(t.URIs) > 0 && t.SecretFile != "" }

// issuer builds the credential issuer, or nil when relay is off.
func (t *turnConfig) issuer() (*turncred.Issuer, error) {
	if !t.Enabled() {
		return nil, nil
	}
	return turncred.New(t.URIs, t.Secret, t.TTL)
}

// turnFlags declares the relay settings on fs.
func turnFlags(fs *flag.FlagSet, t *turnConfig) {
	fs.Func("turn-uri", "TURN relay `uri` given to both sides of a join attempt, e.g. turn:relay.example:3478?transport=udp; repeat the flag or separate with commas for several (default: none, relay off)", func(s string) error {
		for _, u := range strings.Split(s, ",") {
			u = strings.TrimSpace(u)
			if err := checkTurnURI(u); err != nil {
				return err
			}
			t.URIs = append(t.URIs, u)
		}
		return nil
	})
	fs.Func("relay-allow-peers", "`cidr` ranges (comma-separated, or repeat the flag) a side's relayed address may be in although it is loopback, private, link-local, CGNAT, multicast or the mediator's own: for labs and tests only (default: none, only public addresses are introduced)", func(s string) error {
		for _, c := range strings.Split(s, ",") {
			p, err := netip.ParsePrefix(strings.TrimSpace(c))
			if err != nil {
				return fmt.Errorf("%q is not a CIDR range", c)
			}
			t.AllowPeers = append(t.AllowPeers, p.Masked())
		}
		return nil
	})
	fs.IntVar(&t.PerMinute, "relay-credentials-per-minute", httpapi.DefaultRelayCredentialsPerMinute, "relay credentials one principal gets from this instance a minute (1..1000000)")
	fs.StringVar(&t.SecretFile, "turn-secret-file", "", "`file` holding the secret shared with the TURN relay (coturn static-auth-secret, with use-auth-secret); a trailing newline is ignored (default: none, relay off)")
	fs.DurationVar(&t.TTL, "turn-ttl", defaultTurnTTL, fmt.Sprintf("lifetime of a relay credential (%v..%v)", turncred.MinTTL, turncred.MaxTTL))
}

// checkTurnURI accepts RFC 7065 URIs: turn: or turns:, a host, an optional
// numeric port, and at most a transport=udp|tcp query.
func checkTurnURI(s string) error {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme != "turn" && scheme != "turns" {
		return fmt.Errorf("%q is not a turn: or turns: URI", s)
	}
	hostport, query, _ := strings.Cut(rest, "?")
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	if host == "" || strings.ContainsAny(host, "/@ ") {
		return fmt.Errorf("%q has no valid host", s)
	}
	if port != "" {
		if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
			return fmt.Errorf("%q: port must be a number 1..65535", s)
		}
	}
	if query != "" {
		q, err := url.ParseQuery(query)
		tr := q.Get("transport")
		if err != nil || len(q) != 1 || len(q["transport"]) != 1 || tr != "udp" && tr != "tcp" {
			return fmt.Errorf("%q: the only query is transport=udp or transport=tcp", s)
		}
	}
	return nil
}

// validateTurn checks the relay settings and reads the secret.
func (c *config) validateTurn() error {
	t := &c.Turn
	if t.TTL < turncred.MinTTL || t.TTL > turncred.MaxTTL {
		return c.bad("turn-ttl", "%v is not in %v..%v", t.TTL, turncred.MinTTL, turncred.MaxTTL)
	}
	if t.PerMinute < 1 || t.PerMinute > 1_000_000 {
		return c.bad("relay-credentials-per-minute", "%d is not in 1..1000000", t.PerMinute)
	}
	switch {
	case len(t.URIs) > 0 && t.SecretFile == "":
		return c.bad("turn-secret-file", "--turn-uri needs the secret the relay was started with")
	case len(t.URIs) == 0 && t.SecretFile != "":
		return c.bad("turn-uri", "--turn-secret-file needs at least one relay URI")
	case t.SecretFile == "":
		return nil
	}
	secret, shared, err := readLineSecret(t.SecretFile, turncred.MaxSecret)
	if err != nil {
		return c.bad("turn-secret-file", "%v", err)
	}
	t.Secret, t.SecretShared = []byte(secret), shared
	return nil
}

// logTurn records whether relay is on, its URIs and credential lifetime;
// never the secret.
func (s *server) logTurn(t *turnConfig) {
	if !t.Enabled() {
		s.log.Info("relay off: no --turn-uri and --turn-secret-file")
		return
	}
	s.log.Info("relay on", "turn_uris", strings.Join(t.URIs, ","), "turn_ttl", t.TTL.String())
	if t.SecretShared {
		s.log.Warn("the turn secret file is readable by group or others; make it 0600", "file", t.SecretFile)
	}
}
