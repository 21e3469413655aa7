package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// bodyOf answers with h after recording the request's body in *body.
func bodyOf(body *string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*body = string(b)
		h(w, r)
	}
}

// A query's filters and order go out as the contract's parameters.
func TestBrowseQueryParameters(t *testing.T) {
	f, api := newFake(t)
	f.next = []http.HandlerFunc{jsonOK(200, `{"items":[],"next_after":null,"next_cursor":null}`)}
	zero := 0
	q := BrowseQuery{ProtocolVersion: 7, Region: "eu", PageSize: 20, MinPlayers: 1, MaxPlayers: &zero}.
		NotFull().Where("mode", "coop", "pvp").WhereNumber("level", "ge", -3).OrderBy("-current_players")
	if _, next, err := api.BrowsePage(context.Background(), q, "c0"); err != nil || next != "" {
		t.Fatalf("page: %q %v", next, err)
	}
	want := url.Values{"protocol_version": {"7"}, "region": {"eu"}, "limit": {"20"}, "min_free_slots": {"1"}, "min_players": {"1"},
		"max_players": {"0"}, "attr.mode": {"coop|pvp"}, "attr.level.ge": {"-3"}, "order": {"-current_players"}, "cursor": {"c0"}}
	if got := f.reqs[0].URL.Query(); !reflect.DeepEqual(got, want) {
		t.Fatalf("query %v, want %v", got, want)
	}
	// The builders do not share the caller's slices.
	base := BrowseQuery{ProtocolVersion: 7}.Where("a", "x")
	one, two := base.Where("b", "y"), base.Where("c", "z")
	if one.Strings[1].Name != "b" || two.Strings[1].Name != "c" {
		t.Fatalf("builders share filters: %v %v", one.Strings, two.Strings)
	}
}

// A query the server would refuse is refused locally, naming the field,
// and nothing is sent.
func TestBrowseQueryRefusedLocally(t *testing.T) {
	f, api := newFake(t)
	nine := BrowseQuery{ProtocolVersion: 7}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		nine = nine.Where(n, "x")
	}
	big := 1025
	for _, c := range []struct {
		q     BrowseQuery
		field string
	}{
		{BrowseQuery{}, "protocol_version"},
		{BrowseQuery{ProtocolVersion: 7, PageSize: 101}, "limit"},
		{BrowseQuery{ProtocolVersion: 7, Order: "players"}, "order"},
		{BrowseQuery{ProtocolVersion: 7, MinFreeSlots: 2000}, "min_free_slots"},
		{BrowseQuery{ProtocolVersion: 7, MaxPlayers: &big}, "players"},
		{BrowseQuery{ProtocolVersion: 7}.Where("Mode", "x"), "attr"},
		{BrowseQuery{ProtocolVersion: 7}.Where("mode"), "attr"},
		{BrowseQuery{ProtocolVersion: 7}.Where("mode", "a|b"), "attr"},
		{BrowseQuery{ProtocolVersion: 7}.Where("mode", "a").Where("mode", "b"), "attr.mode"},
		{BrowseQuery{ProtocolVersion: 7}.WhereNumber("level", "gte", 1), "attr.level.gte"},
		{BrowseQuery{ProtocolVersion: 7}.WhereNumber("level", "ge", 1<<53), "attr"},
		{nine, "attr"},
	} {
		_, _, err := api.BrowsePage(context.Background(), c.q, "")
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%+v: %v, want an input error on %s", c.q, err, c.field)
		}
	}
	if _, err := api.QuickJoin(context.Background(), "k", BrowseQuery{ProtocolVersion: 7, Order: "-id"}, false); err == nil {
		t.Error("a quick join with an order was sent")
	}
	if f.count() != 0 {
		t.Fatalf("%d requests sent", f.count())
	}
}

// Quick join sends the filters and its key, and answers the attempt with
// the listing chosen; its 404 and a join's listing_full are typed.
func TestQuickJoinCall(t *testing.T) {
	f, api := newFake(t)
	attempt := `{"attempt_id":"` + idA + `","listing_id":"` + idC + `","handle":"` + idB + `","token":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",` +
		`"mediator":"127.0.0.1:3478","expires_at":"2026-07-16T00:00:30.000Z","ttl_s":30,"relay_only":false}`
	var body1, body2 string
	f.next = []http.HandlerFunc{
		bodyOf(&body1, jsonOK(201, attempt)),
		bodyOf(&body2, jsonOK(201, attempt)),
		problem(404, "not_found", ""),
		problem(409, "listing_full", ""),
	}
	q := BrowseQuery{ProtocolVersion: 7}.NotFull().Where("mode", "coop")
	at, err := api.QuickJoin(context.Background(), "qk-1", q, false)
	if err != nil || at.ListingID.String() != idC || at.AttemptID.String() != idA {
		t.Fatalf("quick join: %+v %v", at, err)
	}
	r := f.reqs[0]
	if r.Method != "POST" || r.URL.Path != "/v1/quick-join" || f.keys[0] != "qk-1" || body1 != "" ||
		r.URL.Query().Get("attr.mode") != "coop" || r.URL.Query().Get("min_free_slots") != "1" || r.URL.Query().Has("order") {
		t.Fatalf("quick join request %s %s key %q body %q", r.Method, r.URL, f.keys[0], body1)
	}
	if _, err := api.QuickJoin(context.Background(), "qk-2", q, true); err != nil || body2 != `{"relay_only":true}` ||
		f.reqs[1].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("relay-only quick join: body %q, %v", body2, err)
	}
	if _, err := api.QuickJoin(context.Background(), "qk-3", q, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("nothing matches: %v", err)
	}
	if _, err := api.CreateJoinAttempt(context.Background(), "j-1", ListingID{1}, 7); !errors.Is(err, ErrListingFull) || errors.Is(err, ErrConflict) {
		t.Fatalf("full: %v", err)
	}
}

// A renewal sends attributes only when it sets them; nil clears them.
func TestRenewAttributes(t *testing.T) {
	f, api := newFake(t)
	renewed := `{"version":2,"expires_at":"2026-07-16T00:01:00.000Z","ttl_s":60,"mediator":"127.0.0.1:3478"}`
	bodies := make([]string, 3)
	for i := range bodies {
		f.next = append(f.next, bodyOf(&bodies[i], jsonOK(200, renewed)))
	}
	l := Lease{Version: 1}
	ctx := context.Background()
	for _, r := range []Renewal{
		{CurrentPlayers: 3},
		{CurrentPlayers: -1, SetAttributes: true, Attributes: Attributes{"mode": "pvp", "level": 13}},
		{CurrentPlayers: -1, SetAttributes: true},
	} {
		l.Version = 1
		if err := api.RenewLeaseWith(ctx, ListingID{1}, &l, r); err != nil {
			t.Fatal(err)
		}
	}
	var got []map[string]any
	for _, b := range bodies {
		var m map[string]any
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		delete(m, "lease_id")
		delete(m, "lease_token")
		delete(m, "expected_version")
		got = append(got, m)
	}
	want := []map[string]any{{"current_players": 3.0}, {"attributes": map[string]any{"mode": "pvp", "level": 13.0}}, {"attributes": map[string]any{}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("renew bodies %v, want %v", got, want)
	}
	err := api.RenewLeaseWith(ctx, ListingID{1}, &l, Renewal{CurrentPlayers: -1, SetAttributes: true, Attributes: Attributes{"level": 1.5}})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "attributes" || f.count() != 3 {
		t.Fatalf("a float attribute: %v (%d requests)", err, f.count())
	}
}

// Attributes read back as strings and int64; a spec's are checked locally.
func TestAttributesJSON(t *testing.T) {
	var l Listing
	if err := json.Unmarshal([]byte(`{"listing_id":"`+idA+`","attributes":{"mode":"coop","level":9007199254740991}}`), &l); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Attributes, Attributes{"mode": "coop", "level": int64(9007199254740991)}) {
		t.Fatalf("attributes %#v", l.Attributes)
	}
	if err := json.Unmarshal([]byte(`{"listing_id":"`+idA+`","attributes":{"level":1.5}}`), &l); err == nil {
		t.Fatal("a fraction read as an attribute")
	}
	spec := goodSpec()
	spec.Attributes = Attributes{"mode": "coop", "level": 12}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(spec)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if !reflect.DeepEqual(m["attributes"], map[string]any{"mode": "coop", "level": 12.0}) {
		t.Fatalf("spec JSON %s", b)
	}
	for _, bad := range []Attributes{{"level": 1.5}, {"Mode": "x"}, {"mode": ""}, {"level": int64(1) << 53}, {"mode": true}} {
		spec.Attributes = bad
		var ie *InputError
		if err := spec.Validate(); !errors.As(err, &ie) || ie.Field != "attributes" {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
