package httpapi

import "testing"

func TestRouting(t *testing.T) {
	f := func(method, path string, want op, wantID, wantAllow string) {
		t.Helper()
		r, id := match([]byte(path))
		o, allow := resolve(r, []byte(method))
		if o != want || string(id) != wantID || allow != wantAllow {
			t.Fatalf("%s %s = %s %q %q, want %s %q %q", method, path, opNames[o], id, allow, opNames[want], wantID, wantAllow)
		}
	}
	const id = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0"
	f("GET", "/livez", opLivez, "", "")
	f("POST", "/livez", opUnknown, "", "GET, HEAD")
	f("HEAD", "/livez", opLivez, "", "")
	f("HEAD", "/v1/listings", opBrowse, "", "")
	f("HEAD", "/v1/listings/"+id, opGetListing, id, "")
	f("HEAD", "/v1/listings/"+id+"/lease", opUnknown, id, "PUT")
	f("HEAD", "/v1/admin/revocations", opUnknown, "", "POST")
	f("GET", "/readyz", opReadyz, "", "")
	f("GET", "/metrics", opMetrics, "", "")
	f("GET", "/v1/whoami", opWhoami, "", "")
	f("GET", "/v1/listings", opBrowse, "", "")
	f("POST", "/v1/listings", opCreateListing, "", "")
	f("PUT", "/v1/listings", opUnknown, "", "GET, HEAD, POST")
	f("GET", "/v1/listings/"+id, opGetListing, id, "")
	f("DELETE", "/v1/listings/"+id, opDeleteListing, id, "")
	f("PATCH", "/v1/listings/"+id, opUnknown, id, "GET, HEAD, DELETE")
	f("PUT", "/v1/listings/"+id+"/lease", opRenewLease, id, "")
	f("GET", "/v1/listings/"+id+"/lease", opUnknown, id, "PUT")
	f("POST", "/v1/listings/"+id+"/join-attempts", opCreateAttempt, id, "")
	f("DELETE", "/v1/admin/listings/"+id, opAdminRevokeListing, id, "")
	f("POST", "/v1/admin/revocations", opAdminRevokePrincipal, "", "")
	f("POST", "/v1/admin/drain", opAdminDrain, "", "")
	f("GET", "/v1/admin/stats", opAdminStats, "", "")
	f("POST", "/v1/admin/principals/reload", opAdminReload, "", "")
	f("GET", "/v1/listings/", opUnknown, "", "")
	f("GET", "/v1/listings/"+id+"/", opUnknown, "", "")
	f("GET", "/v1/listings/"+id+"/other", opUnknown, "", "")
	f("DELETE", "/v1/admin/listings/", opUnknown, "", "")
	f("DELETE", "/v1/admin/listings/a/b", opUnknown, "", "")
	f("GET", "/", opUnknown, "", "")
	f("GET", "/v1/listings/x", opGetListing, "x", "")
}

func TestContentType(t *testing.T) {
	f := func(ct string, want bool) {
		t.Helper()
		if got := isJSONContentType([]byte(ct)); got != want {
			t.Fatalf("isJSONContentType(%q) = %v", ct, got)
		}
	}
	f("application/json", true)
	f("Application/JSON", true)
	f("application/json; charset=utf-8", true)
	f(" application/json ;charset=UTF-8", true)
	f("", false)
	f("text/plain", false)
	f("application/jsonx", false)
	f("application/problem+json", false)
}
