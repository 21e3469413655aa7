package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// API is the HTTP side of the contract (docs/contracts/http.md#routes) for one principal,
// on one server or on the instances of one deployment. It is safe for
// concurrent use; set its fields before the first call. The bearer token is
// kept unexported and is never formatted into errors or logs.
type API struct {
	bases []string     // the instances' base URLs, in the order tried
	names []string     // bases with credentials redacted, to show
	cur   atomic.Int32 // the instance requests go to while it serves
	token string
	hc    *http.Client
	// Retry shapes retries of calls the contract makes safe to repeat
	// (idempotency-keyed creations, CAS renewals, deletes and reads) after a
	// transport error or a 503/429 shed with a short Retry-After.
	Retry Backoff
	// MaxRetryAfter is the longest Retry-After the SDK waits out by itself;
	// longer ones are returned to the caller as the typed error.
	MaxRetryAfter time.Duration
	// OnServerChange, if set, is told each time requests move to another
	// instance (several base URLs only): from and to are base URLs
	// (credentials redacted), cause is what the instance left answered.
	// It is called from the goroutine of the request that failed and must
	// return quickly.
	OnServerChange func(from, to string, cause error)
}

const maxAnswerBytes = 1 << 20

// NewAPI returns an API for the server at baseURL (e.g. "http://127.0.0.1:8080")
// authenticating with token. hc may be nil (a client with a 10 s timeout).
//
// baseURL may name several instances of one deployment separated by commas
// ("http://a:8080,http://b:8080"): requests go to the first while it
// serves; after no answer (refused, reset, timed out), a 503
// service_unavailable or a 503 draining they go to the next in the list,
// the failed request retried there after a jittered wait (see Retry).
func NewAPI(baseURL, token string, hc *http.Client) (*API, error) {
	bases, names, err := parseServers(baseURL)
	if err != nil {
		return nil, err
	}
	if token == "" || strings.ContainsAny(token, " \r\n\t") {
		return nil, &ConfigError{Field: "token", Reason: "must be a non-empty bearer token"}
	}
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &API{
		bases: bases, names: names, token: token, hc: hc,
		Retry:         Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second, Attempts: 5},
		MaxRetryAfter: 2 * time.Second,
	}, nil
}

// call is one logical request, possibly sent several times.
type call struct {
	op      string
	method  string
	path    string
	header  map[string]string
	body    any // JSON-encoded if non-nil
	out     any // JSON-decoded on 2xx if non-nil
	status  int
	replay  bool   // Idempotent-Replay: true was present
	problem []byte // raw body of the last error, for extra members
}

// do sends c, retrying per a.Retry where that is safe. Every call the SDK
// makes is safe to repeat by the contract: creations carry an Idempotency-Key,
// renewals are compare-and-swap, deletes and reads are idempotent. Client
// errors are never retried; draining only on another instance.
func (a *API) do(ctx context.Context, c *call) error {
	var payload []byte
	if c.body != nil {
		var err error
		if payload, err = json.Marshal(c.body); err != nil {
			return &ProtocolError{Op: c.op, Reason: "cannot encode request: " + err.Error()}
		}
	}
	bo := a.Retry
	n := len(a.bases)
	if bo.Attempts > 0 && n > 1 {
		bo.Attempts = max(bo.Attempts, n) // every instance gets a try
	}
	moves := 0
	for {
		i := a.cur.Load()
		err := a.once(ctx, c, a.bases[i], payload)
		if err == nil {
			return nil
		}
		wait, retry := a.retryable(err)
		if n > 1 && leaves(err) {
			a.moveOn(i, err)
			// The next instance gets a try whatever this one answered (once
			// each per call: when all drain, draining is the answer), after
			// the backoff alone: a Retry-After spoke for the one left.
			if moves < n-1 && ctx.Err() == nil {
				moves++
				wait, retry = 0, true
			}
		}
		if !retry {
			return err
		}
		d, more := bo.Next()
		if !more {
			return err
		}
		wait = max(wait, d)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), err)
		case <-t.C:
		}
	}
}

// retryable reports whether err may be retried and the least wait before it.
func (a *API) retryable(err error) (time.Duration, bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.Code {
		case "capacity_exceeded", "quota_exceeded", "service_unavailable":
			return ae.RetryAfter, ae.RetryAfter <= a.MaxRetryAfter
		}
		return 0, false
	}
	var te *transportError
	return 0, errors.As(err, &te)
}

// transportError is a failure to get any HTTP answer (connection refused,
// reset, timeout). The request may or may not have reached the server.
type transportError struct {
	op  string
	err error
}

func (e *transportError) Error() string { return "rendezvous: " + e.op + ": " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func (a *API) once(ctx context.Context, c *call, base string, payload []byte) error {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, body)
	if err != nil {
		return &ProtocolError{Op: c.op, Reason: "cannot build request: " + err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// url.Error names the URL only, never headers: no token leaks here.
		return &transportError{op: c.op, err: err}
	}
	defer resp.Body.Close() // read fully below; a close error changes nothing
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return &transportError{op: c.op, err: err}
	}
	c.status = resp.StatusCode
	c.replay = resp.Header.Get("Idempotent-Replay") == "true"
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if c.out != nil {
			if err := json.Unmarshal(raw, c.out); err != nil {
				return &ProtocolError{Op: c.op, Reason: "cannot decode answer: " + err.Error()}
			}
		}
		return nil
	}
	c.problem = raw
	return problemError(c.op, resp, raw)
}

func problemError(op string, resp *http.Response, raw []byte) *APIError {
	var p struct {
		Title          string  `json:"title"`
		Code           string  `json:"code"`
		Detail         string  `json:"detail"`
		CurrentVersion *uint64 `json:"current_version"`
	}
	// A non-JSON error body still yields a typed error from the status alone.
	_ = json.Unmarshal(raw, &p)
	e := &APIError{Op: op, Status: resp.StatusCode, Code: p.Code, Title: p.Title, Detail: p.Detail}
	if e.Code == "" {
		e.Code, e.Inferred = statusCode(resp.StatusCode), true
	}
	if p.CurrentVersion != nil {
		e.CurrentVersion = *p.CurrentVersion
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	return e
}

// statusCode guesses the contract code for a problem without one.
func statusCode(status int) string {
	switch status {
	case 400:
		return "invalid_request"
	case 401:
		return "unauthorized"
	case 403:
		return "forbidden"
	case 404:
		return "not_found"
	case 409:
		return "conflict"
	case 410:
		return "expired"
	case 429:
		return "quota_exceeded"
	case 503:
		return "service_unavailable"
	}
	return "http_" + strconv.Itoa(status)
}
