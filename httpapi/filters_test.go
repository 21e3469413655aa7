package httpapi

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// recordingStore is the harness's store, remembering the last browse query
// and quick join the API handed it.
type recordingStore struct {
	engine.Store
	items  engine.ItemBrowser
	quick  engine.QuickJoiner
	browse engine.Browse
	joined engine.QuickJoin
}

func (s *recordingStore) BrowseItems(ctx context.Context, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	s.browse = q
	// The filters live in the request's scratch, reused after the answer.
	s.browse.Filter.Strings = append([]engine.StringFilter{}, q.Filter.Strings...)
	s.browse.Filter.Numbers = append([]engine.NumberFilter{}, q.Filter.Numbers...)
	for i := range s.browse.Filter.Strings {
		s.browse.Filter.Strings[i].Values = append([]string(nil), q.Filter.Strings[i].Values...)
	}
	return s.items.BrowseItems(ctx, q, dst)
}

func (s *recordingStore) QuickJoin(ctx context.Context, cmd engine.QuickJoin) (engine.AttemptView, engine.Result, error) {
	s.joined = cmd
	s.joined.Query.Filter.Strings = append([]engine.StringFilter{}, cmd.Query.Filter.Strings...)
	s.joined.Query.Filter.Numbers = append([]engine.NumberFilter{}, cmd.Query.Filter.Numbers...)
	return s.quick.QuickJoin(ctx, cmd)
}

func newRecordingHarness(t *testing.T, l engine.Limits) (*harness, *recordingStore) {
	var rec *recordingStore
	h := newHarness(t, l, func(c *Config) {
		rec = &recordingStore{Store: c.Store, items: c.Store.(engine.ItemBrowser), quick: c.Store.(engine.QuickJoiner)}
		c.Store = rec
	})
	return h, rec
}

// The query syntax of docs/contracts/http.md#browse-listings reaches the
// store as the Browse it means.
func TestBrowseQueryParsed(t *testing.T) {
	h, rec := newRecordingHarness(t, testLimits())
	h.expect(req{method: "GET", token: tokCli, path: "/v1/listings?protocol_version=7&region=eu&limit=5&min_free_slots=1&min_players=1" +
		"&max_players=6&attr.mode=coop|pvp&attr.level.ge=-3&attr.level.lt=20&attr.map=harbour&order=-current_players"}, 200, "")
	want := engine.Browse{Tenant: testTenant, ProtocolVersion: 7, Region: "eu", Limit: 5,
		Filter: engine.BrowseFilter{MinFreeSlots: 1, MinPlayers: 1, MaxPlayers: 6, HasMaxPlayers: true,
			Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop", "pvp"}}, {Name: "map", Values: []string{"harbour"}}},
			Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpGe, Value: -3}, {Name: "level", Op: engine.OpLt, Value: 20}}},
		Order: engine.OrderCurrentPlayers, Desc: true}
	if !reflect.DeepEqual(rec.browse, want) {
		t.Fatalf("browse query\n got %+v\nwant %+v", rec.browse, want)
	}
	// max_players=0 (empty) is a filter, not its absence; an order without
	// a sign ascends; the default page size is 50.
	h.expect(req{method: "GET", token: tokCli, path: "/v1/listings?protocol_version=7&max_players=0&order=created_at"}, 200, "")
	want = engine.Browse{Tenant: testTenant, ProtocolVersion: 7, Limit: DefaultBrowseLimit,
		Filter: engine.BrowseFilter{HasMaxPlayers: true, Strings: []engine.StringFilter{}, Numbers: []engine.NumberFilter{}},
		Order:  engine.OrderCreated}
	if !reflect.DeepEqual(rec.browse, want) {
		t.Fatalf("browse query\n got %+v\nwant %+v", rec.browse, want)
	}
}

// Every malformed, unknown, repeated or conflicting parameter is a 400
// naming it, and changes nothing.
func TestBrowseQueryErrors(t *testing.T) {
	h := newHarness(t, testLimits())
	free := cursor{order: engine.OrderFreeSlots, key: 3, after: engine.ListingID{UUID: engine.UUID{1}}, since: 9}
	freeText := string(free.append(nil))
	const id = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0"
	nine := ""
	for i := range 9 {
		nine += "&attr.a" + strconv.Itoa(i) + "=x"
	}
	for _, c := range []struct{ query, detail string }{
		{"region=eu", "protocol_version: is required"},
		{"protocol_version=7&foo=1", "foo: unknown field"},
		{"protocol_version=7&attr=1", "attr: unknown field"},
		{"protocol_version=7&limit=0", "limit: must be an integer in 1..100"},
		{"protocol_version=7&min_free_slots=x", "min_free_slots: must be an integer in 0..1024"},
		{"protocol_version=7&min_free_slots=1&min_free_slots=2", "min_free_slots: is given more than once"},
		{"protocol_version=7&min_players=1025", "min_players: must be an integer in 0..1024"},
		{"protocol_version=7&max_players=-1", "max_players: must be an integer in 0..1024"},
		{"protocol_version=7&max_players=01", "max_players: must be an integer in 0..1024"},
		{"protocol_version=7&order=players", "order: must be id, free_slots, current_players or created_at, optionally with a leading -"},
		{"protocol_version=7&order=--id", "order: must be id, free_slots, current_players or created_at, optionally with a leading -"},
		{"protocol_version=7&order=id&order=-id", "order: is given more than once"},
		{"protocol_version=7&attr.Mode=coop", "attr.Mode: attribute names are 1-16 characters of [a-z0-9_] starting with a letter"},
		{"protocol_version=7&attr.=coop", "attr.: attribute names are 1-16 characters of [a-z0-9_] starting with a letter"},
		{"protocol_version=7&attr.mode=", "attr.mode: values are 1-32 bytes of UTF-8 without control characters, separated by |"},
		{"protocol_version=7&attr.mode=a||b", "attr.mode: values are 1-32 bytes of UTF-8 without control characters, separated by |"},
		{"protocol_version=7&attr.mode=%01", "attr.mode: values are 1-32 bytes of UTF-8 without control characters, separated by |"},
		{"protocol_version=7&attr.mode=" + strings.Repeat("x", 33), "attr.mode: values are 1-32 bytes of UTF-8 without control characters, separated by |"},
		{"protocol_version=7&attr.mode=a|b|c|d|e|f|g|h|i", "attr.mode: takes at most 8 values"},
		{"protocol_version=7&attr.mode=a&attr.mode=b", "attr.mode: is given more than once (one parameter takes several values: a|b)"},
		{"protocol_version=7&attr.level.gte=1", "attr.level.gte: comparisons are eq, ne, lt, le, gt and ge"},
		{"protocol_version=7&attr.level.ge.x=1", "attr.level.ge.x: comparisons are eq, ne, lt, le, gt and ge"},
		{"protocol_version=7&attr.level.ge=1.5", "attr.level.ge: must be an integer in -(2^53-1)..2^53-1"},
		{"protocol_version=7&attr.level.ge=", "attr.level.ge: must be an integer in -(2^53-1)..2^53-1"},
		{"protocol_version=7&attr.level.ge=-0", "attr.level.ge: must be an integer in -(2^53-1)..2^53-1"},
		{"protocol_version=7&attr.level.ge=9007199254740992", "attr.level.ge: must be an integer in -(2^53-1)..2^53-1"},
		{"protocol_version=7&attr.level.ge=1&attr.level.ge=2", "attr.level.ge: is given more than once"},
		{"protocol_version=7" + nine, "attr: at most 8 attribute filters"},
		{"protocol_version=7&cursor=abc", "cursor: is not a cursor this API issued (pass next_cursor back unchanged)"},
		{"protocol_version=7&order=free_slots&cursor=" + freeText + "&cursor=" + freeText, "cursor: is given more than once"},
		{"protocol_version=7&cursor=" + freeText, "cursor: was issued for another order: repeat the query that returned it"},
		{"protocol_version=7&order=-free_slots&cursor=" + freeText, "cursor: was issued for another order: repeat the query that returned it"},
		{"protocol_version=7&order=free_slots&after=" + id, "after: continues only order=id; other orders go on with cursor"},
		{"protocol_version=7&after=" + id + "&cursor=" + freeText, "cursor: cannot be given with after"},
		{"protocol_version=7&after=x", "after: must be a UUID (8-4-4-4-12 hex)"},
	} {
		r := h.rejected(req{method: "GET", path: "/v1/listings?" + c.query, token: tokCli}, 400, "invalid_request")
		if got := r.str("detail"); got != c.detail {
			t.Errorf("%s: detail %q, want %q", c.query, got, c.detail)
		}
	}
	// The same cursor with its own order is taken.
	h.expect(req{method: "GET", path: "/v1/listings?protocol_version=7&order=free_slots&cursor=" + freeText, token: tokCli}, 200, "")
}

// A cursor is read back exactly as written, and nothing else is taken.
func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []cursor{
		{},
		{order: engine.OrderFreeSlots, desc: true, key: engine.MaxPlayers, after: engine.ListingID{UUID: engine.UUID{0xff, 1, 2}}, since: 1<<64 - 1},
		{order: engine.OrderCurrentPlayers, key: 0, since: 7},
		{order: engine.OrderCreated, desc: true, key: 1 << 62},
	} {
		text := c.append(nil)
		if len(text) != cursorTextLen || strings.ContainsAny(string(text), "+/=") {
			t.Fatalf("cursor text %q", text)
		}
		var got cursor
		if !got.decode(text) || got != c {
			t.Fatalf("round trip of %+v: %+v", c, got)
		}
	}
	ok := cursor{order: engine.OrderCurrentPlayers, key: 5}
	text := string(ok.append(nil))
	bad := []string{"", text[1:], text + "A", strings.Replace(text, text[:1], "*", 1),
		text[:len(text)-1] + "B", // non-zero trailing bits
		string((&cursor{order: engine.OrderID, key: 1}).append(nil)),
		string((&cursor{order: engine.OrderFreeSlots, key: engine.MaxPlayers + 1}).append(nil)),
		string((&cursor{order: engine.OrderCurrentPlayers, key: -1}).append(nil)),
		string((&cursor{order: engine.OrderCreated, key: -1}).append(nil)),
		string((&cursor{order: engine.OrderCreated + 1}).append(nil)),
	}
	raw, _ := cursorEncoding.DecodeString(text)
	raw[0] = 2 // another version
	bad = append(bad, cursorEncoding.EncodeToString(raw))
	raw[0], raw[2] = cursorVersion, 2 // a direction that is neither
	bad = append(bad, cursorEncoding.EncodeToString(raw))
	for _, b := range bad {
		var c cursor
		if c.decode([]byte(b)) {
			t.Errorf("cursor %q taken: %+v", b, c)
		}
	}
}

// attributesOf is the attributes member of an item or document.
func attributesOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	a, _ := m["attributes"].(map[string]any)
	return a
}

// Attributes go in with a create, come out of GET and browse, are
// replaced, kept or cleared by a renewal; bad ones are 400 and change
// nothing.
func TestAttributesRoundTrip(t *testing.T) {
	h := newHarness(t, testLimits())
	body := func(attrs string) string {
		return strings.Replace(listingBody("eu", 7, "public"), `"metadata"`, `"attributes":`+attrs+`,"metadata"`, 1)
	}
	l := h.visible(tokPub, body(`{"mode":"coop","level":12,"depth":-9007199254740991,"tag":"\u00e9t\u00e9"}`))
	get := func() map[string]any {
		t.Helper()
		return h.expect(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli}, 200, "").json
	}
	want := map[string]any{"mode": "coop", "level": 12.0, "depth": -9007199254740991.0, "tag": "été"}
	if got := attributesOf(t, get()); !reflect.DeepEqual(got, want) {
		t.Fatalf("GET attributes %v, want %v", got, want)
	}
	page := h.expect(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokCli}, 200, "")
	items := page.json["items"].([]any)
	if len(items) != 1 || !reflect.DeepEqual(attributesOf(t, items[0].(map[string]any)), want) {
		t.Fatalf("browse attributes: %s", page.body)
	}
	if !strings.Contains(string(page.body), `"current_players":1,"attributes":{"depth":-9007199254740991,"level":12,"mode":"coop","tag":"été"},"lease_expires_at"`) {
		t.Fatalf("attributes are not encoded sorted after current_players: %s", page.body)
	}
	// The same create replays; other attributes are another request.
	h.expect(req{method: "POST", path: "/v1/listings", token: tokPub, body: l.body, headers: []string{"Idempotency-Key", l.idemKey}}, 200, "")
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: body(`{"mode":"pvp"}`), headers: []string{"Idempotency-Key", l.idemKey}}, 409, "conflict")

	renew := func(version int, extra string, status int, code string) *response {
		t.Helper()
		q := req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
			body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":` + itoa(version) + extra + `}`}
		if status != 200 {
			return h.rejected(q, status, code)
		}
		return h.expect(q, status, code)
	}
	renew(1, `,"current_players":2`, 200, "") // absent: unchanged
	if got := attributesOf(t, get()); !reflect.DeepEqual(got, want) {
		t.Fatalf("attributes after a renewal without them: %v", got)
	}
	renew(2, `,"attributes":{"mode":"pvp","level":3}`, 200, "")
	if got := attributesOf(t, get()); !reflect.DeepEqual(got, map[string]any{"mode": "pvp", "level": 3.0}) {
		t.Fatalf("replaced attributes: %v", got)
	}
	for _, c := range []struct{ attrs, detail string }{
		{`{"level":1.5}`, "attributes: numbers must be integers in -(2^53-1)..2^53-1"},
		{`{"level":1.0}`, "attributes: numbers must be integers in -(2^53-1)..2^53-1"},
		{`{"level":1e3}`, "attributes: numbers must be integers in -(2^53-1)..2^53-1"},
		{`{"level":9007199254740992}`, "attributes: numbers must be integers in -(2^53-1)..2^53-1"},
		{`{"level":-9007199254740992}`, "attributes: numbers must be integers in -(2^53-1)..2^53-1"},
		{`{"level":99999999999999999999999}`, "attributes: numbers must be integers in -(2^53-1)..2^53-1"},
		{`{"mode":true}`, "attributes: values must be strings or integers"},
		{`{"mode":null}`, "attributes: values must be strings or integers"},
		{`{"mode":["coop"]}`, "attributes: values must be strings or integers"},
		{`{"mode":""}`, "attributes: string values must be 1-32 bytes of UTF-8 without control characters or '|'"},
		{`{"mode":"a|b"}`, "attributes: string values must be 1-32 bytes of UTF-8 without control characters or '|'"},
		{`{"mode":"a\u0007"}`, "attributes: string values must be 1-32 bytes of UTF-8 without control characters or '|'"},
		{`{"Mode":"coop"}`, "attributes: names must be 1-16 characters of [a-z0-9_] starting with a letter"},
		{`{"mode":"coop","mode":"pvp"}`, "attributes: duplicate name"},
		{`{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1}`, "attributes: at most 8 entries"},
		{`["mode"]`, "attributes: must be an object"},
		{`"mode"`, "attributes: must be an object"},
	} {
		r := renew(3, `,"attributes":`+c.attrs, 400, "invalid_request")
		if got := r.str("detail"); got != c.detail {
			t.Errorf("renew %s: detail %q, want %q", c.attrs, got, c.detail)
		}
		r = h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: body(c.attrs), headers: []string{"Idempotency-Key", "bad-attrs"}}, 400, "invalid_request")
		if got := r.str("detail"); got != c.detail {
			t.Errorf("create %s: detail %q, want %q", c.attrs, got, c.detail)
		}
	}
	renew(3, `,"attributes":{}`, 200, "")
	if m := get(); m["attributes"] != nil {
		t.Fatalf("cleared attributes are still there: %v", m)
	}
	renew(4, `,"attributes":{"mode":"coop"}`, 200, "")
	renew(5, `,"attributes":null`, 200, "")
	if m := get(); m["attributes"] != nil {
		t.Fatalf("attributes cleared with null are still there: %v", m)
	}
}

// Filters and orders through the API and the store, walking next_cursor:
// "not full, mode = coop, most players first".
func TestBrowseFiltersAndCursor(t *testing.T) {
	l := testLimits()
	l.MaxListings, l.OwnerListingQuota, l.TenantListingQuota = 20, 20, 20
	h := newHarness(t, l)
	mk := func(mode string, cur, max int) listing {
		b := strings.Replace(listingBody("eu", 7, "public"), `"current_players":1,"max_players":8`,
			`"current_players":`+itoa(cur)+`,"max_players":`+itoa(max)+`,"attributes":{"mode":"`+mode+`"}`, 1)
		return h.visible(tokPub, b)
	}
	coop5, coop3, coop1 := mk("coop", 5, 8), mk("coop", 3, 4), mk("coop", 1, 8)
	mk("coop", 4, 4) // full
	mk("pvp", 6, 8)  // another mode
	var got []string
	var players []float64
	query := "protocol_version=7&min_free_slots=1&attr.mode=coop&order=-current_players&limit=1"
	next := ""
	for range 10 {
		r := h.expect(req{method: "GET", path: "/v1/listings?" + query + next, token: tokCli}, 200, "")
		for _, it := range r.json["items"].([]any) {
			m := it.(map[string]any)
			got = append(got, m["listing_id"].(string))
			players = append(players, m["current_players"].(float64))
		}
		if r.json["next_after"] != nil {
			t.Fatalf("next_after in another order than id: %s", r.body)
		}
		c, _ := r.json["next_cursor"].(string)
		if c == "" {
			break
		}
		next = "&cursor=" + c
	}
	if want := []string{coop5.id, coop3.id, coop1.id}; !reflect.DeepEqual(got, want) || !reflect.DeepEqual(players, []float64{5, 3, 1}) {
		t.Fatalf("walk %v (players %v), want %v", got, players, want)
	}
}

// Quick join: the answer of a join on the listing the store picks, a
// replay like a join's, 404 when nothing matches; a plain join to a full
// listing is 409 listing_full.
func TestQuickJoinRoute(t *testing.T) {
	h, rec := newRecordingHarness(t, testLimits())
	mk := func(mode string, cur, max int) listing {
		b := strings.Replace(listingBody("eu", 7, "public"), `"current_players":1,"max_players":8`,
			`"current_players":`+itoa(cur)+`,"max_players":`+itoa(max)+`,"attributes":{"mode":"`+mode+`"}`, 1)
		return h.visible(tokPub, b)
	}
	few, _, full := mk("coop", 1, 8), mk("pvp", 7, 8), mk("coop", 4, 4)
	path := "/v1/quick-join?protocol_version=7&attr.mode=coop"
	qj := func(key, body string, headers ...string) req {
		return req{method: "POST", path: path, token: tokCli, body: body, headers: append([]string{"Idempotency-Key", key}, headers...)}
	}
	r := h.expect(qj("q1", ""), 201, "")
	if r.str("listing_id") != few.id || r.str("attempt_id") == "" || r.str("token") == "" || r.json["relay_only"] != false {
		t.Fatalf("quick join: %s", r.body)
	}
	h.secrets = append(h.secrets, r.str("token"))
	if q := rec.joined.Query; q.Tenant != testTenant || q.ProtocolVersion != 7 || len(q.Filter.Strings) != 1 ||
		rec.joined.Join.ProtocolVersion != 7 || rec.joined.Join.Client != "cli-1" || rec.joined.Join.IdempotencyKey != "q1" {
		t.Fatalf("quick join command %+v", rec.joined)
	}
	if h.offers.count() != 1 {
		t.Fatalf("offers %d, want 1", h.offers.count())
	}
	again := h.expect(qj("q1", "{}"), 200, "")
	if again.str("attempt_id") != r.str("attempt_id") || again.header["Idempotent-Replay"] != "true" || h.offers.count() != 1 {
		t.Fatalf("replay: %s %v (offers %d)", again.body, again.header, h.offers.count())
	}
	h.rejected(req{method: "POST", path: "/v1/quick-join?protocol_version=7&attr.mode=pvp", token: tokCli, headers: []string{"Idempotency-Key", "q1"}}, 409, "conflict")

	nf := h.rejected(req{method: "POST", path: "/v1/quick-join?protocol_version=7&attr.mode=ctf", token: tokCli, headers: []string{"Idempotency-Key", "q2"}}, 404, "not_found")
	if nf.str("detail") != "no listing matches the query" {
		t.Fatalf("404 detail %q", nf.str("detail"))
	}
	for _, c := range []struct {
		q            req
		status       int
		code, detail string
	}{
		{req{method: "POST", path: path + "&order=-id", token: tokCli, headers: []string{"Idempotency-Key", "q3"}}, 400, "invalid_request", "order: is not a parameter of quick join"},
		{req{method: "POST", path: path + "&limit=1", token: tokCli, headers: []string{"Idempotency-Key", "q3"}}, 400, "invalid_request", "limit: is not a parameter of quick join"},
		{req{method: "POST", path: path + "&cursor=x", token: tokCli, headers: []string{"Idempotency-Key", "q3"}}, 400, "invalid_request", "cursor: is not a parameter of quick join"},
		{req{method: "POST", path: path + "&after=x", token: tokCli, headers: []string{"Idempotency-Key", "q3"}}, 400, "invalid_request", "after: is not a parameter of quick join"},
		{req{method: "POST", path: "/v1/quick-join?attr.mode=coop", token: tokCli, headers: []string{"Idempotency-Key", "q3"}}, 400, "invalid_request", "protocol_version: is required"},
		{req{method: "POST", path: path, token: tokCli}, 400, "invalid_request", "Idempotency-Key: header is required"},
		{qj("q3", `{"relay_only":1}`), 400, "invalid_request", "relay_only: must be true or false"},
		{qj("q3", `{"protocol_version":7}`), 400, "invalid_request", "protocol_version: unknown field"},
		{qj("q3", `{"relay_only":true}`), 409, "relay_unavailable", "relay_only: the relay fallback is not enabled on this server"},
		{qj("q3", `{}`, "Content-Type", "text/plain"), 415, "unsupported_media_type", "Content-Type must be application/json"},
		{req{method: "POST", path: path, token: tokPub, headers: []string{"Idempotency-Key", "q3"}}, 403, "forbidden", "the principal lacks the role for this route"},
		{req{method: "GET", path: path, token: tokCli}, 405, "method_not_allowed", "allowed: POST"},
	} {
		if got := h.rejected(c.q, c.status, c.code).str("detail"); got != c.detail {
			t.Errorf("%s %s: detail %q, want %q", c.q.method, c.q.path, got, c.detail)
		}
	}

	fr := h.rejected(req{method: "POST", path: "/v1/listings/" + full.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", "j1"}}, 409, "listing_full")
	if fr.str("detail") != "the host reports current_players = max_players" {
		t.Fatalf("listing_full detail %q", fr.str("detail"))
	}
	var problem map[string]any
	if err := json.Unmarshal(fr.body, &problem); err != nil || problem["type"] != "urn:rendezvous:problem:listing_full" {
		t.Fatalf("listing_full problem %s", fr.body)
	}
}
