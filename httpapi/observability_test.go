package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func TestMetricsEndpoint(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.expect(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokCli}, 200, "")
	h.expect(req{method: "GET", path: "/v1/listings/" + l.id, token: tokOtherCli}, 404, "not_found")
	h.expect(req{method: "GET", path: "/v1/whoami"}, 401, "unauthorized")
	r := h.expect(req{method: "GET", path: "/metrics", token: tokGlobalOp}, 200, "")
	text := string(r.body)
	for _, want := range []string{
		`rendezvous_http_requests_total{route="create_listing",status="201"} 1`,
		`rendezvous_http_requests_total{route="browse",status="200"} 1`,
		`rendezvous_http_requests_total{route="get_listing",status="404"} 1`,
		`rendezvous_http_requests_total{route="whoami",status="401"} 1`,
		`rendezvous_http_store_outcomes_total{op="create_listing",outcome="success"} 1`,
		`rendezvous_http_store_outcomes_total{op="get_listing",outcome="not_found"} 1`,
		`rendezvous_http_request_duration_seconds_bucket{route="browse",le="+Inf"} 1`,
		`rendezvous_http_request_duration_seconds_count{route="browse"} 1`,
		`rendezvous_http_store_duration_seconds_bucket{op="create_listing",le="2.5"} 1`,
		`rendezvous_http_store_duration_seconds_count{op="create_listing"} 1`,
		`rendezvous_pool_used{pool="listings"} 1`,
		`rendezvous_pool_ceiling{pool="listings"} 6`,
		`rendezvous_pool_used{pool="presence"} 1`,
		`rendezvous_pool_ceiling{pool="idempotency"} 35000`,
		`rendezvous_quota_limit{quota="owner_listings"} 3`,
		`rendezvous_quota_limit{quota="tenant_idempotency"} 35000`,
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("metrics lack %q:\n%s", want, text)
		}
	}
	if !strings.HasPrefix(r.header["Content-Type"], "text/plain") {
		t.Fatalf("Content-Type %q", r.header["Content-Type"])
	}
}

// A fresh API shows every store series at 0 (so rates and alerts on them
// work from the first scrape) and latency histograms with Prometheus le
// buckets.
func TestMetricsFreshAPIShowsEveryStoreSeries(t *testing.T) {
	h := newHarness(t, testLimits())
	text := string(h.expect(req{method: "GET", path: "/metrics", token: tokGlobalOp}, 200, "").body)
	var want []string
	for _, o := range storeOps {
		for out := engine.Success; out <= engine.ServiceUnavailable; out++ {
			want = append(want, `rendezvous_http_store_outcomes_total{op="`+opNames[o]+`",outcome="`+out.String()+`"} 0`)
		}
		want = append(want, `rendezvous_http_store_duration_seconds_bucket{op="`+opNames[o]+`",le="0.0001"} 0`)
	}
	for o := range numOps {
		want = append(want, `rendezvous_http_request_duration_seconds_bucket{route="`+opNames[o]+`",le="+Inf"} 0`)
	}
	for p := engine.PoolListings; p <= engine.PoolIdempotency; p++ {
		want = append(want, `rendezvous_pool_used{pool="`+p.String()+`"} 0`, `rendezvous_pool_ceiling{pool="`+p.String()+`"} `)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("fresh metrics lack %q", w)
		}
	}
	if strings.Contains(text, "vmrange") {
		t.Errorf("fresh metrics hold VictoriaMetrics vmrange buckets:\n%s", text)
	}
}

// A full flow logs at debug level; no token, capability or fingerprint may
// appear in any encoding.
func TestLogsHoldNoSecrets(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(req{method: "POST", path: "/v1/listings/" + l.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", "j"}}, 201, "")
	h.secrets = append(h.secrets, r.str("token"))
	h.expect(req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
		body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":1}`}, 200, "")
	h.expect(req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
		body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":1}`}, 409, "conflict")
	h.expect(req{method: "GET", path: "/v1/whoami", headers: []string{"Authorization", "Bearer wrong-token-value-123"}}, 401, "unauthorized")
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokOp, body: `{"subject":"cli-1","ttl_s":5}`}, 200, "")
	h.expect(req{method: "DELETE", path: "/v1/listings/" + l.id, token: tokPub,
		headers: []string{"Lease-Id", l.leaseID, "Lease-Token", l.leaseToken}}, 204, "")
	h.expect(req{method: "POST", path: "/v1/admin/drain", token: tokGlobalOp}, 202, "")

	logs := h.logs.String()
	if !strings.Contains(logs, `"msg":"listing created"`) || !strings.Contains(logs, `"msg":"request"`) {
		t.Fatalf("the flow was not logged:\n%s", logs)
	}
	secrets := append([]string{tokPub, tokCli, tokOp, tokGlobalOp, "wrong-token-value-123"}, h.secrets...)
	var forms []string
	for _, s := range secrets {
		forms = append(forms, s)
		c, ok := engine.ParseToken(s)
		if !ok {
			continue
		}
		fp := engine.FingerprintOf(&c)
		forms = append(forms, hex.EncodeToString(c[:]), hex.EncodeToString(fp[:]),
			base64.StdEncoding.EncodeToString(c[:]), base64.RawURLEncoding.EncodeToString(fp[:]),
			base64.StdEncoding.EncodeToString(fp[:]))
	}
	for _, tok := range []string{tokPub, tokCli, tokOp, tokGlobalOp} {
		forms = append(forms, tokenHash(tok))
	}
	for _, f := range forms {
		if strings.Contains(logs, f) {
			t.Fatalf("the log holds a secret (%d chars)", len(f))
		}
	}
	if bytes.Count([]byte(logs), []byte("\n")) < 10 {
		t.Fatalf("too few log lines:\n%s", logs)
	}
}
