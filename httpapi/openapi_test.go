package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/docs/contracts"
)

// openAPIDoc is the part of the OpenAPI document these tests read.
type openAPIDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			OneOf []struct {
				Const string `json:"const"`
			} `json:"oneOf"`
			AllOf []struct {
				Properties map[string]struct {
					Const any   `json:"const"`
					Enum  []any `json:"enum"`
				} `json:"properties"`
			} `json:"allOf"`
		} `json:"schemas"`
	} `json:"components"`
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	var d openAPIDoc
	if err := json.Unmarshal(contracts.OpenAPI, &d); err != nil {
		t.Fatalf("docs/contracts/openapi.json: %v", err)
	}
	return &d
}

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// TestOpenAPIRoutesMatchRouter: every path of the description is a route of
// the router with the same methods and the same need for authentication,
// and every route of the router is described.
func TestOpenAPIRoutesMatchRouter(t *testing.T) {
	d := loadOpenAPI(t)
	described := map[route]string{}
	for path, item := range d.Paths {
		concrete := strings.ReplaceAll(path, "{listing_id}", "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0")
		r, _ := match([]byte(concrete))
		if r == routeNone {
			t.Errorf("the description's path %s is not a route", path)
			continue
		}
		if other, dup := described[r]; dup {
			t.Errorf("paths %s and %s are the same route", path, other)
		}
		described[r] = path
		var specMethods []string
		for _, m := range httpMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			specMethods = append(specMethods, strings.ToUpper(m))
			var op struct {
				Security *[]any `json:"security"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if public != r.public() {
				t.Errorf("%s %s: the description says public=%v, the router %v", m, path, public, r.public())
			}
		}
		// The methods the router dispatches (HEAD included wherever GET is),
		// asked of resolve itself rather than read from its table.
		var routerMethods []string
		for _, m := range httpMethods {
			if o, _ := resolve(r, []byte(strings.ToUpper(m))); o != opUnknown {
				routerMethods = append(routerMethods, strings.ToUpper(m))
			}
		}
		slices.Sort(specMethods)
		slices.Sort(routerMethods)
		if !slices.Equal(specMethods, routerMethods) {
			t.Errorf("%s: the description has methods %v, the router %v", path, specMethods, routerMethods)
		}
	}
	for r := routeNone + 1; r < numRoutes; r++ {
		if _, ok := described[r]; !ok {
			t.Errorf("route %d (methods %v) is not in the description", r, routeMethods[r])
		}
	}
}

// TestOpenAPIHeadMirrorsGet: the server answers HEAD exactly as GET, so
// each path's head operation has its get operation's parameters, security
// and answers, and no path has one without the other.
func TestOpenAPIHeadMirrorsGet(t *testing.T) {
	d := loadOpenAPI(t)
	for path, item := range d.Paths {
		get, hasGet := item["get"]
		head, hasHead := item["head"]
		if hasGet != hasHead {
			t.Errorf("%s: get %v, head %v: want both or neither", path, hasGet, hasHead)
			continue
		}
		if !hasGet {
			continue
		}
		var g, h map[string]any
		if err := json.Unmarshal(get, &g); err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		if err := json.Unmarshal(head, &h); err != nil {
			t.Fatalf("head %s: %v", path, err)
		}
		for _, k := range []string{"parameters", "security", "responses"} {
			if !reflect.DeepEqual(g[k], h[k]) {
				t.Errorf("%s: head's %s differ from get's:\n\t%v\n\t%v", path, k, h[k], g[k])
			}
		}
	}
}

// TestOpenAPIProblemCodes: the description's ProblemCode lists exactly the
// codes of the problem table, and for each there is a problem schema that
// pins its status and admits its code.
func TestOpenAPIProblemCodes(t *testing.T) {
	d := loadOpenAPI(t)
	var described []string
	for _, c := range d.Components.Schemas["ProblemCode"].OneOf {
		described = append(described, c.Const)
	}
	var emitted []string
	for k := range numProblems {
		p := problems[k]
		emitted = append(emitted, p.code)
		found := false
		for _, s := range d.Components.Schemas {
			for _, part := range s.AllOf {
				st, code := part.Properties["status"], part.Properties["code"]
				if st.Const == float64(p.status) && (code.Const == p.code || slices.Contains(code.Enum, any(p.code))) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("no problem schema with status %d and code %s", p.status, p.code)
		}
	}
	slices.Sort(described)
	slices.Sort(emitted)
	if !slices.Equal(described, emitted) {
		t.Errorf("ProblemCode lists %v, the API's problem table %v", described, emitted)
	}
}

// TestOpenAPIServed: GET /v1/openapi.json needs no token and answers the
// repository's document byte for byte.
func TestOpenAPIServed(t *testing.T) {
	h := newHarness(t, testLimits())
	r := h.expect(req{method: "GET", path: "/v1/openapi.json"}, 200, "")
	if !bytes.Equal(r.body, contracts.OpenAPI) {
		t.Fatalf("served %d bytes that differ from docs/contracts/openapi.json (%d bytes)", len(r.body), len(contracts.OpenAPI))
	}
	if ct := r.header["Content-Type"]; ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	h.rejected(req{method: "POST", path: "/v1/openapi.json"}, 405, "method_not_allowed")
}
