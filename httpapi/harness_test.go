package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// harness runs the API on a real fasthttp server over an in-memory listener
// with a MemStore on a manual clock.
type harness struct {
	t      *testing.T
	clock  *engine.ManualClock
	keys   *engine.Keyring
	store  *memstore.Store
	served engine.Store // the store the API runs on: store unless an option set another
	api    *API
	client *fasthttp.Client
	ln     *fasthttputil.InmemoryListener
	offers *offerRecorder
	logs   *e2e.LockedBuffer
	// secrets collects every token and capability the test saw, for the log scan.
	secrets []string
}

// Test principals and their tokens.
const (
	tokPub      = "token-publisher-demo-dev-0001"
	tokPub2     = "token-publisher-demo-dev-0002"
	tokCli      = "token-client-demo-dev-0001"
	tokBoth     = "token-client-publisher-demo-dev"
	tokOp       = "token-operator-demo-dev-0001"
	tokGlobalOp = "token-operator-global-00001"
	tokOtherPub = "token-publisher-other-dev-001"
	tokOtherCli = "token-client-other-dev-00001"
	tokOtherOp  = "token-operator-other-dev-001"
)

var testTenant = engine.Tenant{Game: "demo", Env: "dev"}

func testPrincipals(t testing.TB) *Principals {
	t.Helper()
	e := func(subject, game, env, role, tok string) string {
		roles := `"` + strings.ReplaceAll(role, ",", `","`) + `"`
		return `{"subject":"` + subject + `","game_id":"` + game + `","environment_id":"` + env +
			`","roles":[` + roles + `],"token_sha256":"` + tokenHash(tok) + `"}`
	}
	doc := `{"principals":[` + strings.Join([]string{
		e("pub-1", "demo", "dev", "publisher", tokPub),
		e("pub-2", "demo", "dev", "publisher", tokPub2),
		e("cli-1", "demo", "dev", "client", tokCli),
		e("both-1", "demo", "dev", "client,publisher", tokBoth),
		e("op-1", "demo", "dev", "operator", tokOp),
		e("gop", "*", "*", "operator", tokGlobalOp),
		e("opub-1", "other", "dev", "publisher", tokOtherPub),
		e("ocli-1", "other", "dev", "client", tokOtherCli),
		e("oop-1", "other", "dev", "operator", tokOtherOp),
	}, ",") + `]}`
	ps, err := ParsePrincipals([]byte(doc), true)
	if err != nil {
		t.Fatalf("test principals: %v", err)
	}
	return ps
}

func testLimits() engine.Limits {
	l := engine.DefaultLimits()
	l.MaxListings = 6
	l = l.WholePools() // the tests' one tenant may fill a pool
	l.OwnerListingQuota = 3
	l.MaxRevocations = 2
	return l
}

type offerRecorder struct {
	mu     sync.Mutex
	offers []engine.AttemptView
}

func (o *offerRecorder) Offer(v engine.AttemptView) {
	o.mu.Lock()
	o.offers = append(o.offers, v)
	o.mu.Unlock()
}

func (o *offerRecorder) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.offers)
}

// newHarness builds the API with testPrincipals; opts adjust the Config.
func newHarness(t *testing.T, limits engine.Limits, opts ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: engine.NewManualClock(), keys: engine.RandomKeyring(), offers: &offerRecorder{}, logs: &e2e.LockedBuffer{}}
	st, err := memstore.New(limits, h.clock, h.keys)
	if err != nil {
		t.Fatalf("memstore.New: %v", err)
	}
	h.store = st
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	set := metrics.NewSet()
	cfg := Config{
		Store: st, Keys: h.keys, Limits: limits, Principals: testPrincipals(t), Offerer: h.offers,
		MediatorAddr: "127.0.0.1:3478", Logger: logger, Metrics: set,
		WritePrometheus: func(w io.Writer) { set.WritePrometheus(w) },
	}
	for _, o := range opts {
		o(&cfg)
	}
	h.served = cfg.Store
	h.api, err = New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln := fasthttputil.NewInmemoryListener()
	h.ln = ln
	srv := h.api.NewServer()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	h.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	return h
}

// response is one answer, decoded.
type response struct {
	status int
	header map[string]string
	body   []byte
	json   map[string]any
}

func (r *response) str(key string) string {
	s, _ := r.json[key].(string)
	return s
}

func (r *response) num(key string) float64 {
	n, _ := r.json[key].(float64)
	return n
}

// req is a request: method, path, bearer token ("" for none), body, and
// header pairs. A body gets Content-Type application/json unless a
// Content-Type pair is given.
type req struct {
	method, path, token, body string
	headers                   []string
}

func (h *harness) do(q req) *response {
	h.t.Helper()
	rq := fasthttp.AcquireRequest()
	rs := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(rq)
	defer fasthttp.ReleaseResponse(rs)
	rq.Header.SetMethod(q.method)
	rq.SetRequestURI("http://rendezvous.test" + q.path)
	if q.token != "" {
		rq.Header.Set("Authorization", "Bearer "+q.token)
	}
	if q.body != "" {
		rq.Header.SetContentType("application/json")
		rq.SetBodyString(q.body)
	}
	for i := 0; i+1 < len(q.headers); i += 2 {
		rq.Header.Set(q.headers[i], q.headers[i+1])
	}
	if err := h.client.DoTimeout(rq, rs, 10*time.Second); err != nil {
		h.t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	r := &response{status: rs.StatusCode(), header: map[string]string{}, body: append([]byte(nil), rs.Body()...)}
	for k, v := range rs.Header.All() {
		r.header[string(k)] = string(v)
	}
	if len(r.body) > 0 && strings.Contains(r.header["Content-Type"], "json") {
		if err := json.Unmarshal(r.body, &r.json); err != nil {
			h.t.Fatalf("%s %s: answer is not JSON: %v\n%s", q.method, q.path, err, r.body)
		}
	}
	return r
}

// expect checks an answer's status and, for a problem, its code and shape.
func (h *harness) expect(q req, status int, code string) *response {
	h.t.Helper()
	r := h.do(q)
	if r.status != status {
		h.t.Fatalf("%s %s: status %d, want %d\n%s", q.method, q.path, r.status, status, r.body)
	}
	if code != "" {
		if ct := r.header["Content-Type"]; ct != "application/problem+json" {
			h.t.Fatalf("%s %s: Content-Type %q, want application/problem+json", q.method, q.path, ct)
		}
		if r.str("code") != code || r.num("status") != float64(status) || r.str("type") == "" || r.str("title") == "" || r.str("detail") == "" {
			h.t.Fatalf("%s %s: problem %s, want code %s", q.method, q.path, r.body, code)
		}
		if (status == 429 || status == 503) && r.header["Retry-After"] == "" {
			h.t.Fatalf("%s %s: %d without Retry-After", q.method, q.path, status)
		}
	}
	return r
}

// rejected checks that q answers status/code and changed nothing in the store.
func (h *harness) rejected(q req, status int, code string) *response {
	h.t.Helper()
	before := h.store.Snapshot()
	r := h.expect(q, status, code)
	if after := h.store.Snapshot(); after != before {
		h.t.Fatalf("%s %s (%d %s) changed the store:\nbefore:\n%s\nafter:\n%s", q.method, q.path, status, code, before, after)
	}
	if err := h.store.CheckInvariants(); err != nil {
		h.t.Fatalf("invariants after %s %s: %v", q.method, q.path, err)
	}
	return r
}

// listing is what a create answer hands the publisher.
type listing struct {
	id, leaseID, leaseToken, presence, presenceToken, idemKey, body string
}

var createSeq int

func listingBody(region string, proto int, vis string) string {
	return `{"region":"` + region + `","protocol_version":` + itoa(proto) + `,"build_version":"1.2.3",
 "display_name":"Test host","visibility":"` + vis + `","trust_mode":"managed_dedicated",
 "current_players":1,"max_players":8,"metadata":{"mode":"coop"}}`
}

func itoa(n int) string { return string(appendInt(nil, int64(n))) }

// create makes a listing as token and returns it; it fails the test unless 201.
func (h *harness) create(token, body string) listing {
	h.t.Helper()
	createSeq++
	key := "key-" + itoa(createSeq)
	r := h.expect(req{method: "POST", path: "/v1/listings", token: token, body: body, headers: []string{"Idempotency-Key", key}}, 201, "")
	l := h.created(r)
	l.idemKey, l.body = key, body
	return l
}

// created reads the listing a create answer r hands the publisher.
func (h *harness) created(r *response) listing {
	lease, _ := r.json["lease"].(map[string]any)
	pres, _ := r.json["presence"].(map[string]any)
	l := listing{
		id: r.str("listing_id"), leaseID: lease["lease_id"].(string), leaseToken: lease["token"].(string),
		presence: pres["handle"].(string), presenceToken: pres["token"].(string),
	}
	h.secrets = append(h.secrets, l.leaseToken, l.presenceToken)
	return l
}

// bindPresence makes the host's presence fresh, as the mediator would.
func (h *harness) bindPresence(l listing, seq uint64) {
	h.t.Helper()
	hd := engine.Handle{UUID: mustUUID(h.t, l.presence)}
	cp, ok := engine.ParseToken(l.presenceToken)
	if !ok {
		h.t.Fatalf("presence token does not parse")
	}
	_, r, err := h.served.BindHostPresence(context.Background(), engine.BindPresence{
		Handle: hd, Key: engine.FingerprintOf(&cp), Seq: seq,
		Public: netip.MustParseAddrPort("198.51.100.7:40000"),
	})
	if err != nil || !r.OK() {
		h.t.Fatalf("bind presence: %v %v", r.Outcome, err)
	}
}

// visible creates a listing and makes it joinable.
func (h *harness) visible(token, body string) listing {
	h.t.Helper()
	l := h.create(token, body)
	h.bindPresence(l, 1)
	return l
}

// raw writes a request on its own connection (from a goroutine, ignoring
// write errors: the server may answer and close before reading it all) and
// reads the answer.
func (h *harness) raw(request []byte) *response {
	h.t.Helper()
	c, err := h.ln.Dial()
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write(request) }() // the server may close early
	var rs fasthttp.Response
	if err := rs.Read(bufio.NewReader(c)); err != nil {
		h.t.Fatalf("reading the answer: %v", err)
	}
	r := &response{status: rs.StatusCode(), header: map[string]string{}, body: append([]byte(nil), rs.Body()...)}
	for k, v := range rs.Header.All() {
		r.header[string(k)] = string(v)
	}
	if err := json.Unmarshal(r.body, &r.json); err != nil {
		h.t.Fatalf("answer is not JSON: %v\n%s", err, r.body)
	}
	return r
}
