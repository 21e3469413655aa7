package openapitest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	listingID = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0"
	token43   = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// exchange is one request and answer to check.
type exchange struct {
	method, path string
	reqHeader    []string // name, value, ...
	reqBody      string
	status       int
	respHeader   []string
	respBody     string
}

func (e exchange) check(t *testing.T) []string {
	t.Helper()
	c, err := Repository()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(e.method, "http://127.0.0.1:8080"+e.path, strings.NewReader(e.reqBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	if e.reqBody != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(e.reqHeader); i += 2 {
		req.Header.Set(e.reqHeader[i], e.reqHeader[i+1])
	}
	resp := &http.Response{StatusCode: e.status, Header: http.Header{}, Request: req}
	for i := 0; i+1 < len(e.respHeader); i += 2 {
		resp.Header.Set(e.respHeader[i], e.respHeader[i+1])
	}
	return c.Check(req, []byte(e.reqBody), resp, []byte(e.respBody))
}

func problem(status int, code string, extra string) string {
	return fmt.Sprintf(`{"type":"urn:rendezvous:problem:%s","title":"t","status":%d,"code":"%s","detail":"d"%s}`, code, status, code, extra)
}

var (
	jsonCT      = []string{"Content-Type", "application/json"}
	problemCT   = []string{"Content-Type", "application/problem+json"}
	tenantStats = `{"game_id":"demo","environment_id":"dev","pools":{"listings":{"used":1,"quota":12500},` +
		`"attempts":{"used":0,"quota":5000},"idempotency":{"used":1,"quota":17500}},"owner_listing_quota":100,"subject_attempt_quota":1000}`
	listing = `{"region":"eu-central","protocol_version":7,"build_version":"1.2.3","display_name":"Host",` +
		`"visibility":"public","trust_mode":"managed_dedicated","current_players":1,"max_players":8,"metadata":{"mode":"coop"}}`
	item = `{"listing_id":"` + listingID + `","region":"eu-central","protocol_version":7,"build_version":"1.2.3","display_name":"Host",` +
		`"trust_mode":"managed_dedicated","max_players":8,"metadata":{"mode":"coop"},"current_players":1,"lease_expires_at":"2026-07-16T00:01:00.000Z"}`
	created = `{"listing_id":"` + listingID + `","lease":{"lease_id":"` + listingID + `","token":"` + token43 +
		`","version":1,"expires_at":"2026-07-16T00:01:00.000Z","ttl_s":60},"presence":{"handle":"` + listingID +
		`","token":"` + token43 + `","mediator":"127.0.0.1:3478","interval_s":5,"ttl_s":20}}`
)

func with(h []string, more ...string) []string { return append(append([]string{}, h...), more...) }

// TestCheckAcceptsDescribedExchanges: answers the server gives, as the
// description has them, pass.
func TestCheckAcceptsDescribedExchanges(t *testing.T) {
	for _, e := range []exchange{
		{method: "GET", path: "/livez", status: 200, respHeader: jsonCT, respBody: `{"status":"live"}`},
		{method: "GET", path: "/readyz", status: 503, respHeader: with(jsonCT, "Retry-After", "30"), respBody: `{"status":"draining"}`},
		{method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: listing,
			status: 201, respHeader: with(jsonCT, "Location", "/v1/listings/"+listingID), respBody: created},
		{method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: listing,
			status: 200, respHeader: with(jsonCT, "Location", "/v1/listings/"+listingID, "Idempotent-Replay", "true"), respBody: created},
		{method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: listing,
			status: 503, respHeader: with(problemCT, "Retry-After", "1"), respBody: problem(503, "capacity_exceeded", "")},
		{method: "PUT", path: "/v1/listings/" + listingID + "/lease",
			reqBody: `{"lease_id":"` + listingID + `","lease_token":"x","expected_version":1,"current_players":null}`,
			status:  409, respHeader: problemCT, respBody: problem(409, "conflict", `,"current_version":3`)},
		{method: "GET", path: "/v1/listings?protocol_version=7&limit=2", status: 200, respHeader: jsonCT, respBody: `{"items":[],"next_after":null,"next_cursor":null}`},
		{method: "GET", path: "/v1/listings?protocol_version=7", status: 200, respHeader: jsonCT, respBody: `{"items":[` + item + `],"next_after":"` + listingID + `","next_cursor":"` + strings.Repeat("A", 47) + `"}`},
		{method: "DELETE", path: "/v1/listings/" + listingID, reqHeader: []string{"Lease-Id", listingID, "Lease-Token", "t"}, status: 204},
		{method: "GET", path: "/v1/nowhere", status: 404, respHeader: problemCT, respBody: problem(404, "not_found", "")},
		{method: "PATCH", path: "/v1/listings", status: 405, respHeader: with(problemCT, "Allow", "GET, HEAD, POST"), respBody: problem(405, "method_not_allowed", "")},
		{method: "GET", path: "/v1/nowhere", status: 401, respHeader: with(problemCT, "WWW-Authenticate", `Bearer realm="rendezvous"`), respBody: problem(401, "unauthorized", "")},
		// HEAD answers GET's status and headers without the body.
		{method: "HEAD", path: "/livez", status: 200, respHeader: jsonCT},
		{method: "HEAD", path: "/v1/listings?protocol_version=7", status: 200, respHeader: jsonCT},
		{method: "HEAD", path: "/v1/admin/stats", status: 403, respHeader: problemCT},
		{method: "GET", path: "/v1/admin/tenant-stats?game_id=demo&environment_id=dev", status: 200, respHeader: jsonCT, respBody: tenantStats},
		{method: "POST", path: "/v1/admin/principals/reload", status: 200, respHeader: jsonCT, respBody: `{"loaded":4}`},
		{method: "POST", path: "/v1/admin/principals/reload", status: 409, respHeader: problemCT, respBody: problem(409, "not_reloadable", "")},
		{method: "POST", path: "/v1/admin/principals/reload", status: 422, respHeader: problemCT, respBody: problem(422, "principals_invalid", "")},
		// A request that does not arrive in time, on any path.
		{method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: listing,
			status: 408, respHeader: with(problemCT, "Connection", "close"), respBody: problem(408, "request_timeout", "")},
		{method: "GET", path: "/v1/nowhere", status: 408, respHeader: with(problemCT, "Connection", "close"), respBody: problem(408, "request_timeout", "")},
		{method: "POST", path: "/v1/listings/" + listingID + "/join-attempts", reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: `{"protocol_version":7}`,
			status: 429, respHeader: with(problemCT, "Retry-After", "5"),
			respBody: `{"type":"urn:rendezvous:problem:quota_exceeded","title":"t","status":429,"code":"quota_exceeded","detail":"quota tenant_idempotency is exhausted"}`},
		// A header the server does not know is ignored, not a fault.
		{method: "GET", path: "/livez", reqHeader: []string{"X-Trace", "1"}, status: 200, respHeader: jsonCT, respBody: `{"status":"live"}`},
		// A request the description rejects (no Idempotency-Key) refused with a described problem.
		{method: "POST", path: "/v1/listings", reqBody: listing, status: 400, respHeader: problemCT, respBody: problem(400, "invalid_request", "")},
	} {
		if bad := e.check(t); len(bad) > 0 {
			t.Errorf("%s %s %d: unexpected mismatch:\n%s", e.method, e.path, e.status, strings.Join(bad, "\n"))
		}
	}
}

// TestCheckReportsDrift: every kind of drift between server and description
// is reported.
func TestCheckReportsDrift(t *testing.T) {
	for what, e := range map[string]exchange{
		"undocumented status": {method: "GET", path: "/livez", status: 418, respHeader: jsonCT, respBody: `{"status":"live"}`},
		"wrong body type":     {method: "GET", path: "/v1/whoami", status: 200, respHeader: jsonCT, respBody: `{"subject":1,"game_id":"demo","environment_id":"dev","roles":["client"]}`},
		"undeclared member":   {method: "GET", path: "/livez", status: 200, respHeader: jsonCT, respBody: `{"status":"live","extra":1}`},
		"wrong content type":  {method: "GET", path: "/livez", status: 200, respHeader: []string{"Content-Type", "text/html"}, respBody: `{"status":"live"}`},
		"missing Retry-After": {method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k"}, reqBody: listing,
			status: 429, respHeader: problemCT, respBody: problem(429, "quota_exceeded", "")},
		"undeclared header": {method: "GET", path: "/livez", status: 200, respHeader: with(jsonCT, "X-Debug", "1"), respBody: `{"status":"live"}`},
		"wrong problem code": {method: "GET", path: "/v1/listings/" + listingID, status: 404, respHeader: problemCT,
			respBody: problem(404, "expired", "")},
		"uppercase UUID in an answer": {method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k"}, reqBody: listing,
			status: 201, respHeader: with(jsonCT, "Location", "/v1/listings/"+listingID),
			respBody: strings.Replace(created, `"listing_id":"0f1e2d3c`, `"listing_id":"0F1E2D3C`, 1)},
		"accepted what the description rejects": {method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k"},
			reqBody: strings.Replace(listing, `"region":"eu-central",`, "", 1),
			status:  201, respHeader: with(jsonCT, "Location", "/v1/listings/"+listingID), respBody: created},
		"405 with another Allow": {method: "PATCH", path: "/v1/listings", status: 405, respHeader: with(problemCT, "Allow", "GET"),
			respBody: problem(405, "method_not_allowed", "")},
		"404 on a described path": {method: "PATCH", path: "/v1/listings", status: 404, respHeader: problemCT, respBody: problem(404, "not_found", "")},
		"401 on a public path":    {method: "POST", path: "/livez", status: 401, respHeader: with(problemCT, "WWW-Authenticate", `Bearer realm="rendezvous"`), respBody: problem(401, "unauthorized", "")},
		"401 without WWW-Authenticate": {method: "GET", path: "/v1/nowhere", status: 401, respHeader: problemCT,
			respBody: problem(401, "unauthorized", "")},
		"metadata key outside its pattern": {method: "GET", path: "/v1/listings?protocol_version=7", status: 200, respHeader: jsonCT,
			respBody: `{"items":[` + strings.Replace(item, `"mode"`, `"Mode"`, 1) + `],"next_after":null,"next_cursor":null}`},
		"empty body where one is described": {method: "GET", path: "/livez", status: 200, respHeader: jsonCT},
		"body where none is described": {method: "DELETE", path: "/v1/listings/" + listingID, reqHeader: []string{"Lease-Id", listingID, "Lease-Token", "t"},
			status: 204, respHeader: jsonCT, respBody: `{}`},
		"HEAD with an undocumented status":              {method: "HEAD", path: "/livez", status: 418, respHeader: jsonCT},
		"HEAD accepted with an unknown query parameter": {method: "HEAD", path: "/v1/listings?protocol_version=7&colour=red", status: 200, respHeader: jsonCT},
		"tenant-stats accepted for a tenant outside its pattern": {method: "GET", path: "/v1/admin/tenant-stats?game_id=Demo&environment_id=dev",
			status: 200, respHeader: jsonCT, respBody: tenantStats},
		"instance stats without a quota": {method: "GET", path: "/v1/admin/stats", status: 200, respHeader: jsonCT,
			respBody: `{"instance_id":"` + listingID + `","available":true,"draining":false,"pools":{"listings":{"used":0,"ceiling":1},` +
				`"presence":{"used":0,"ceiling":1},"attempts":{"used":0,"ceiling":1},"replay":{"used":0,"ceiling":1},"revocations":{"used":0,"ceiling":1},` +
				`"idempotency":{"used":0,"ceiling":1}},"quotas":{"owner_listings":1,"subject_attempts":1,"tenant_listings":1,"tenant_attempts":1},"in_flight":0}`},
		"429 naming no quota": {method: "POST", path: "/v1/listings", reqHeader: []string{"Idempotency-Key", "k"}, reqBody: listing,
			status: 429, respHeader: with(problemCT, "Retry-After", "5"),
			respBody: `{"type":"urn:rendezvous:problem:quota_exceeded","title":"t","status":429,"code":"quota_exceeded","detail":"quota pool is exhausted"}`},
		"408 on an undescribed path with another code": {method: "GET", path: "/v1/nowhere", status: 408, respHeader: problemCT,
			respBody: problem(408, "not_found", "")},
		"reload answered 422 with another code": {method: "POST", path: "/v1/admin/principals/reload", status: 422, respHeader: problemCT,
			respBody: problem(422, "invalid_request", "")},
		"undescribed route answered 200": {method: "GET", path: "/v1/nowhere", status: 200, respHeader: jsonCT, respBody: `{}`},
	} {
		bad := e.check(t)
		if len(bad) == 0 {
			t.Errorf("%s: not reported", what)
		}
		t.Logf("%s: %q", what, bad)
	}
}

// recorder is a Reporter that keeps what it is told.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any)  { panic(fmt.Sprintf(format, a...)) }
func (r *recorder) reported(t *testing.T, want int) { t.Helper(); checkCount(t, r.errs, want) }

func checkCount(t *testing.T, errs []string, want int) {
	t.Helper()
	if len(errs) != want {
		t.Fatalf("%d mismatches reported, want %d: %q", len(errs), want, errs)
	}
}

// TestTransportReportsAndPassesAnswersOn: the transport reports a drifting
// answer over a real connection and still hands the caller the whole body.
func TestTransportReportsAndPassesAnswersOn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/livez" {
			io.WriteString(w, `{"status":"live"}`)
			return
		}
		io.WriteString(w, `{"status":"ready","since":"now"}`) // an undeclared member
	}))
	defer srv.Close()
	rec := &recorder{}
	hc := Client(rec, srv.Client())
	for _, path := range []string{"/livez", "/readyz"} {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"status"`) {
			t.Fatalf("%s: the caller got body %q", path, b)
		}
	}
	rec.reported(t, 1)
	if !strings.Contains(rec.errs[0], "GET /readyz answered 200") {
		t.Fatalf("report %q does not name the exchange", rec.errs[0])
	}
}
