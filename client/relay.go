package client

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Relay is a TURN relay the server granted to one side of one attempt, in the
// shape of WebRTC's RTCIceServer: the "relay" member of a join attempt's answer
// and of the host relay credential's (docs/contracts/http.md#relay-fallback).
// The credential is coturn's TURN REST API password, valid until the expiry in
// Username; it prints redacted.
type Relay struct {
	URLs       []string
	Username   string
	Credential RelayCredential
	TTL        time.Duration
}

// RelayCredential is a TURN password. It prints as "[REDACTED]" with every
// fmt verb and marshals as "[REDACTED]", so it cannot leak through a log line.
type RelayCredential string

func (RelayCredential) String() string               { return "[REDACTED]" }
func (RelayCredential) GoString() string             { return "[REDACTED]" }
func (RelayCredential) Format(f fmt.State, _ rune)   { f.Write([]byte("[REDACTED]")) }
func (RelayCredential) MarshalText() ([]byte, error) { return []byte("[REDACTED]"), nil }

// wireRelay is the relay object as the HTTP API sends it.
type wireRelay struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username"`
	Credential string   `json:"credential"`
	TTL        int64    `json:"ttl_s"`
}

func (w *wireRelay) relay(op string) (*Relay, error) {
	if w == nil {
		return nil, nil
	}
	if len(w.URLs) == 0 || w.Username == "" || w.Credential == "" {
		return nil, &ProtocolError{Op: op, Reason: "relay object without urls, username or credential"}
	}
	return &Relay{URLs: w.URLs, Username: w.Username, Credential: RelayCredential(w.Credential), TTL: time.Duration(w.TTL) * time.Second}, nil
}

var (
	// ErrRelayRefused: the TURN relay refused the credentials (a wrong
	// shared secret on the server, or the credential expired).
	ErrRelayRefused = errors.New("rendezvous: relay refused the credentials")
	// ErrRelayUnavailable: no relay could be used: the server has relaying
	// off (problem relay_unavailable), it granted no UDP relay URL, or no
	// relay answered within the punch timeout.
	ErrRelayUnavailable = errors.New("rendezvous: relay unavailable")
	// errRelayOff: the server answered that its relay fallback is off when
	// a side asked for its credential after a failed punch; the punch's
	// own error is the outcome.
	errRelayOff = errors.New("rendezvous: the server's relay fallback is off")
)

// RelayError is the typed failure of a TURN allocation; it matches
// ErrRelayRefused or ErrRelayUnavailable. It never carries the credential.
type RelayError struct {
	Server string // host:port of the TURN server tried last
	Code   int    // the TURN error code (401 unauthorized, ...); 0 if none
	Reason string
}

func (e *RelayError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%v: %s answered error %d %s", e.Unwrap(), e.Server, e.Code, e.Reason)
	}
	return fmt.Sprintf("%v: %s: %s", e.Unwrap(), e.Server, e.Reason)
}

// refusedCodes are the TURN answers that mean "these credentials will not
// do": 401 Unauthorized (wrong secret or expired), 403 Forbidden, 437
// Allocation Mismatch, 441 Wrong Credentials.
func refusedCode(code int) bool { return code == 401 || code == 403 || code == 437 || code == 441 }

func (e *RelayError) Unwrap() error {
	if refusedCode(e.Code) {
		return ErrRelayRefused
	}
	return ErrRelayUnavailable
}

// turnServers returns host:port of every plain-UDP TURN URL of r, in order
// ("turn:host[:port][?transport=udp]"); turns: and TCP transports are not
// spoken by the SDK and are skipped.
func (r *Relay) turnServers() []string {
	var out []string
	for _, u := range r.URLs {
		if hp, ok := turnUDPServer(u); ok {
			out = append(out, hp)
		}
	}
	return out
}

func turnUDPServer(raw string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, "turn:")
	if !ok {
		return "", false
	}
	hostport, query, _ := strings.Cut(rest, "?")
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil || (q.Has("transport") && q.Get("transport") != "udp") {
			return "", false
		}
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port: the default TURN port.
		host, port = strings.Trim(hostport, "[]"), "3478"
	}
	if host == "" {
		return "", false
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return "", false
	}
	return net.JoinHostPort(host, port), true
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if ua, ok := a.(*net.UDPAddr); ok {
		return unmapAP(ua.AddrPort())
	}
	return netip.AddrPort{}
}
