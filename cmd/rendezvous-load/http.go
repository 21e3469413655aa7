package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// apiSet is the load tester's HTTP side: one client.API per principal of
// the tokens file, all sharing one *http.Client whose Transport is the
// keep-alive pool (at most --conns connections to the server). Every call is
// sent once: the SDK's retries are disabled, because the tester counts each
// answer (a shed is an outcome to record, not to wait out). Safe for
// concurrent use. It holds bearer tokens inside the client.API values, which
// never format them; apiSet has no String method and is never printed.
type apiSet struct {
	hc   *http.Client
	base string // "http://host:port"

	pubs    []*client.API // by publisher index of the tokens file
	clients []*client.API // by client index
	op      *client.API   // nil when the tokens hold no operator
	// opToken is the operator's bearer token for /metrics, which the API
	// listener serves to a global operator only ("" without one).
	opToken string
}

// newAPISet builds the pool for the server at addr (host:port) and one API
// per token. tok may be empty (udprate against a plain STUN server).
func newAPISet(addr string, conns int, timeout time.Duration, tok *Tokens) (*apiSet, error) {
	s := &apiSet{hc: newHTTPClient(conns, timeout), base: "http://" + addr}
	api := func(role string, i int, token string) (*client.API, error) {
		a, err := client.NewAPI(s.base, token, s.hc)
		if err != nil {
			// The error names the field, never the token's value.
			return nil, &ConfigError{"tokens", fmt.Sprintf("%s %d: %v", role, i, err)}
		}
		a.Retry = client.Backoff{Attempts: 1} // one try: every answer is counted
		return a, nil
	}
	for i, t := range tok.Publishers {
		a, err := api("publisher", i, t)
		if err != nil {
			return nil, err
		}
		s.pubs = append(s.pubs, a)
	}
	for i, t := range tok.Clients {
		a, err := api("client", i, t)
		if err != nil {
			return nil, err
		}
		s.clients = append(s.clients, a)
	}
	if tok.Operator != "" {
		a, err := api("operator", 0, tok.Operator)
		if err != nil {
			return nil, err
		}
		s.op, s.opToken = a, tok.Operator
	}
	return s, nil
}

// maxMetricsBytes bounds the /metrics answer the tester reads.
const maxMetricsBytes = 8 << 20

// metrics fetches /metrics (Prometheus text) for the server-side figures,
// with the operator's token when the tokens hold one (the API listener
// serves /metrics to a global operator only).
func (s *apiSet) metrics(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", s.base+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("cannot build GET /metrics: %w", err)
	}
	if s.opToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.opToken)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close() // read fully below; a close error changes nothing
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBytes))
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	return body, nil
}

// problemCodes are the problem codes of the wire contract (docs/contracts/http.md#errors,
// docs/contracts): the store's outcomes, the request-shape errors, and the
// server's own (headers too large, internal error, principals reload).
var problemCodes = map[string]bool{
	"not_found": true, "expired": true, "revoked": true, "conflict": true, "replay_rejected": true,
	"capacity_exceeded": true, "quota_exceeded": true, "draining": true, "service_unavailable": true,
	"invalid_request": true, "unauthorized": true, "forbidden": true, "payload_too_large": true,
	"unsupported_media_type": true, "method_not_allowed": true, "headers_too_large": true,
	"internal_error": true, "not_reloadable": true, "principals_invalid": true, "listing_full": true,
}

// classify maps the error of one client.API call to the request's Code:
// nil is CodeOK; an *client.APIError by its status and problem code (one
// without a code the contract knows, e.g. a bare 429 whose code the SDK
// only inferred from the status, is CodeUntyped: never a typed shed); input the SDK refused before sending is
// CodeBadRequest; an answer the SDK could not understand is
// CodeOtherStatus; a timeout (the client's, or waiting for a pooled
// connection) CodeTimeout; any other failure to get an answer CodeTransport.
func classify(err error) Code {
	if err == nil {
		return CodeOK
	}
	var ae *client.APIError
	if errors.As(err, &ae) {
		if ae.Inferred || !problemCodes[ae.Code] {
			return CodeUntyped
		}
		return httpCode(ae.Status, ae.Code)
	}
	var ie *client.InputError
	if errors.As(err, &ie) {
		return CodeBadRequest // refused locally: nothing was sent
	}
	var pe *client.ProtocolError
	if errors.As(err, &pe) {
		return CodeOtherStatus
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return CodeTimeout
	}
	return CodeTransport
}

// loadMetadata is every created listing's metadata; shared read-only.
var loadMetadata = map[string]string{"mode": "load"}

// listingSpec is the spec of the n-th created listing; n makes each display
// name unique.
func listingSpec(n int, region string, pv uint32) client.ListingSpec {
	return client.ListingSpec{
		Region: region, ProtocolVersion: pv, BuildVersion: "1.0.0",
		DisplayName: "load " + strconv.Itoa(n), Visibility: "public", TrustMode: "player_hosted",
		CurrentPlayers: n % 8, MaxPlayers: 8, Metadata: loadMetadata, Attributes: listingAttributes(n),
	}
}
