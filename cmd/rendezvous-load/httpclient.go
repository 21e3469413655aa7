package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// API is the load tester's thin HTTP layer over the contract (CONTRACT.md §3),
// built on a fasthttp keep-alive connection pool so the generator spends
// little CPU per request on a machine it shares with the server. Safe for
// concurrent use. (Once the client SDK is complete this is the part that
// should move onto it; see docs/load-testing.md.)
type API struct {
	hc      *fasthttp.HostClient
	timeout time.Duration
}

// NewAPI returns a client for the server at addr (host:port) with up to
// conns keep-alive connections.
func NewAPI(addr string, conns int, timeout time.Duration) *API {
	return &API{timeout: timeout, hc: &fasthttp.HostClient{
		Addr: addr, MaxConns: conns, MaxIdleConnDuration: time.Minute,
		ReadTimeout: timeout, WriteTimeout: timeout,
		MaxConnWaitTimeout: timeout,
	}}
}

// reply is one HTTP answer: the code classifying it, the status and a copy
// of the body when the caller asked for it.
type reply struct {
	Status int
	Code   Code
	Body   []byte
	// RetryAfter is set on 503/429 answers.
	RetryAfter bool
}

type problem struct {
	Code string `json:"code"`
}

// do sends one request. body may be nil. keepBody copies the body out.
func (a *API) do(method, uri, token string, hdr [][2]string, body []byte, keepBody bool) reply {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	req.Header.SetHost(a.hc.Addr)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range hdr {
		req.Header.Set(h[0], h[1])
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	err := a.hc.DoTimeout(req, resp, a.timeout)
	if err != nil {
		if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrNoFreeConns) {
			return reply{Code: CodeTimeout}
		}
		return reply{Code: CodeTransport}
	}
	st := resp.StatusCode()
	r := reply{Status: st}
	if st >= 300 {
		var p problem
		// A body that is not problem+json leaves p.Code empty; the status
		// alone then classifies the answer.
		_ = json.Unmarshal(resp.Body(), &p)
		r.Code = httpCode(st, p.Code)
		r.RetryAfter = len(resp.Header.Peek("Retry-After")) > 0
	} else {
		r.Code = CodeOK
	}
	if keepBody {
		r.Body = append([]byte(nil), resp.Body()...)
	}
	return r
}

// Listing is what the load tester keeps of a listing it created. Tokens
// are secrets: Listing has no String method and is never printed.
type Listing struct {
	ID           string `json:"listing_id"`
	Lease        Lease  `json:"lease"`
	Presence     Pres   `json:"presence"`
	PublisherIdx int    `json:"-"`
}

type Lease struct {
	ID      string `json:"lease_id"`
	Token   string `json:"token"`
	Version uint64 `json:"version"`
}

type Pres struct {
	Handle   string `json:"handle"`
	Token    string `json:"token"`
	Mediator string `json:"mediator"`
}

// listingBody is the JSON body of a create; n makes each display name unique.
func listingBody(n int, region string, pv uint32) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"region":"`...)
	b = append(b, region...)
	b = append(b, `","protocol_version":`...)
	b = strconv.AppendUint(b, uint64(pv), 10)
	b = append(b, `,"build_version":"1.0.0","display_name":"load `...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `","visibility":"public","trust_mode":"player_hosted","current_players":1,"max_players":8,"metadata":{"mode":"load"}}`...)
	return b
}

// CreateListing posts a listing with the given idempotency key.
func (a *API) CreateListing(token, key string, body []byte) (Listing, reply) {
	r := a.do("POST", "/v1/listings", token, [][2]string{{"Idempotency-Key", key}}, body, true)
	var l Listing
	if r.Code == CodeOK {
		if err := json.Unmarshal(r.Body, &l); err != nil || l.ID == "" {
			r.Code = CodeOtherStatus
		}
	}
	r.Body = nil
	return l, r
}

// RenewLease renews with compare-and-swap on version; on success it returns
// the new version.
func (a *API) RenewLease(token string, l *Listing, version uint64) (uint64, reply) {
	body := fmt.Appendf(nil, `{"lease_id":%q,"lease_token":%q,"expected_version":%d}`, l.Lease.ID, l.Lease.Token, version)
	r := a.do("PUT", "/v1/listings/"+l.ID+"/lease", token, nil, body, true)
	var v struct {
		Version uint64 `json:"version"`
	}
	if r.Code == CodeOK {
		if err := json.Unmarshal(r.Body, &v); err != nil || v.Version == 0 {
			r.Code = CodeOtherStatus
		}
	}
	r.Body = nil
	return v.Version, r
}

// BrowsePage is one page of GET /v1/listings.
type BrowsePage struct {
	Items []struct {
		ID string `json:"listing_id"`
	} `json:"items"`
	NextAfter *string `json:"next_after"`
}

// Browse fetches one page after the cursor (empty for the first page).
func (a *API) Browse(token string, pv uint32, after string, limit int) (BrowsePage, reply) {
	uri := "/v1/listings?protocol_version=" + strconv.FormatUint(uint64(pv), 10) + "&limit=" + strconv.Itoa(limit)
	if after != "" {
		uri += "&after=" + after
	}
	r := a.do("GET", uri, token, nil, nil, true)
	var p BrowsePage
	if r.Code == CodeOK {
		if err := json.Unmarshal(r.Body, &p); err != nil {
			r.Code = CodeOtherStatus
		}
	}
	r.Body = nil
	return p, r
}

// GetListing fetches one listing; CodeOK means it is joinable now.
func (a *API) GetListing(token, id string) reply {
	return a.do("GET", "/v1/listings/"+id, token, nil, nil, false)
}

// Attempt is a created join attempt. Token is the client's capability.
type Attempt struct {
	ID       string `json:"attempt_id"`
	Handle   string `json:"handle"`
	Token    string `json:"token"`
	Mediator string `json:"mediator"`
}

// Join creates a join attempt on listing id.
func (a *API) Join(token, id, key string, pv uint32) (Attempt, reply) {
	body := strconv.AppendUint([]byte(`{"protocol_version":`), uint64(pv), 10)
	body = append(body, '}')
	r := a.do("POST", "/v1/listings/"+id+"/join-attempts", token, [][2]string{{"Idempotency-Key", key}}, body, true)
	var at Attempt
	if r.Code == CodeOK {
		if err := json.Unmarshal(r.Body, &at); err != nil || at.Handle == "" {
			r.Code = CodeOtherStatus
		}
	}
	r.Body = nil
	return at, r
}

// PoolStat is one pool of /v1/admin/stats.
type PoolStat struct {
	Used    int `json:"used"`
	Ceiling int `json:"ceiling"`
}

// ServerStats is /v1/admin/stats.
type ServerStats struct {
	InstanceID string              `json:"instance_id"`
	Available  bool                `json:"available"`
	Draining   bool                `json:"draining"`
	Pools      map[string]PoolStat `json:"pools"`
}

// Stats reads the operator stats.
func (a *API) Stats(token string) (ServerStats, error) {
	r := a.do("GET", "/v1/admin/stats", token, nil, nil, true)
	var s ServerStats
	if r.Code != CodeOK {
		return s, fmt.Errorf("cannot read /v1/admin/stats: status %d (%s)", r.Status, r.Code)
	}
	if err := json.Unmarshal(r.Body, &s); err != nil {
		return s, fmt.Errorf("cannot decode /v1/admin/stats: %w", err)
	}
	return s, nil
}

// Whoami reads the principal's identity (used to check tokens before a run).
func (a *API) Whoami(token string) (subject string, err error) {
	r := a.do("GET", "/v1/whoami", token, nil, nil, true)
	if r.Code != CodeOK {
		return "", fmt.Errorf("GET /v1/whoami: status %d (%s)", r.Status, r.Code)
	}
	var w struct {
		Subject string `json:"subject"`
	}
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return "", fmt.Errorf("cannot decode /v1/whoami: %w", err)
	}
	return w.Subject, nil
}

// Metrics fetches /metrics (Prometheus text) for the server-side figures.
func (a *API) Metrics() ([]byte, error) {
	r := a.do("GET", "/metrics", "", nil, nil, true)
	if r.Code != CodeOK {
		return nil, fmt.Errorf("GET /metrics: status %d", r.Status)
	}
	return r.Body, nil
}
