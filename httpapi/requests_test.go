package httpapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

const validCreateBody = `{"region":"eu-central","protocol_version":7,"build_version":"1.2.3",
 "display_name":"Test host","visibility":"public","trust_mode":"managed_dedicated",
 "current_players":1,"max_players":8,"metadata":{"mode":"coop"}}`

func TestDecodeCreateListingValid(t *testing.T) {
	var d decoder
	var spec engine.ListingSpec
	if err := decodeCreateListing(&d, []byte(validCreateBody), &spec); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	want := engine.ListingSpec{
		Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Test host",
		Visibility: engine.Public, TrustMode: engine.ManagedDedicated, CurrentPlayers: 1, MaxPlayers: 8,
		Metadata: []engine.MetaEntry{{Key: "mode", Value: "coop"}},
	}
	if spec.Hash() != want.Hash() || spec.Region != want.Region || len(spec.Metadata) != 1 {
		t.Fatalf("decoded %+v, want %+v", spec, want)
	}
}

// The canonical fingerprint ignores member order, whitespace and metadata
// order, and treats omitted, null and {} metadata alike
// (docs/contracts/semantics.md#idempotent-creation).
func TestDecodeCreateListingCanonical(t *testing.T) {
	hash := func(body string) [32]byte {
		t.Helper()
		var d decoder
		var spec engine.ListingSpec
		if err := decodeCreateListing(&d, []byte(body), &spec); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		return spec.Hash()
	}
	base := `{"region":"eu","protocol_version":7,"build_version":"1","display_name":"x","visibility":"public","trust_mode":"player_hosted","current_players":0,"max_players":2`
	f := func(a, b string, equal bool) {
		t.Helper()
		if got := hash(a) == hash(b); got != equal {
			t.Fatalf("hash equality of\n%s\n%s\n= %v, want %v", a, b, got, equal)
		}
	}
	f(base+`}`, base+`,"metadata":null}`, true)
	f(base+`}`, base+`,"metadata":{}}`, true)
	f(base+`,"metadata":{"a":"1","b":"2"}}`, base+`,"metadata":{"b":"2","a":"1"}}`, true)
	f(base+`,"metadata":{"a":"1"}}`, " \n"+base+` , "metadata" : { "a" : "1" } } `, true)
	f(`{"max_players":2,"current_players":0,"trust_mode":"player_hosted","visibility":"public","display_name":"x","build_version":"1","protocol_version":7,"region":"eu"}`, base+`}`, true)
	f(`{"region":"e\u0075","protocol_version":7,"build_version":"1","display_name":"x","visibility":"public","trust_mode":"player_hosted","current_players":0,"max_players":2}`, base+`}`, true)
	f(base+`,"metadata":{"a":"1"}}`, base+`,"metadata":{"a":"2"}}`, false)
	f(base+`}`, strings.Replace(base, `"max_players":2`, `"max_players":3`, 1)+`}`, false)
}

func TestDecodeCreateListingErrors(t *testing.T) {
	f := func(body, field string) {
		t.Helper()
		var d decoder
		var spec engine.ListingSpec
		err := decodeCreateListing(&d, []byte(body), &spec)
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("decode %q: got %v, want *engine.InputError for %s", body, err, field)
		}
		if ie.Field != field {
			t.Fatalf("decode %q: field %q (%s), want %q", body, ie.Field, ie.Reason, field)
		}
	}
	ok := strings.TrimSuffix(strings.ReplaceAll(validCreateBody, "\n", ""), "}")
	rep := func(old, new string) string { return strings.Replace(validCreateBody, old, new, 1) }
	f(``, "body")
	f(`[]`, "body")
	f(`null`, "body")
	f(`{`, "body")
	f(ok+`,}`, "body")
	f(validCreateBody+`{}`, "body")
	f(validCreateBody+`x`, "body")
	f(ok+`,"extra":1}`, "extra")
	f(ok+`,"region":"eu"}`, "region")      // duplicate member
	f(ok+`,"regio\u006e":"eu"}`, "region") // duplicate after unescaping
	f(rep(`"mode":"coop"`, `"mode":"coop","mode":"x"`), "metadata")
	f(rep(`"protocol_version":7`, `"protocol_version":7.0`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":7e0`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":"7"`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":0`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":4294967296`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":99999999999999999999999`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":-1`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":07`), "body")
	f(rep(`"protocol_version":7`, `"protocol_version":null`), "protocol_version")
	f(rep(`"protocol_version":7`, `"protocol_version":true`), "protocol_version")
	f(rep(`"protocol_version":7,`, ``), "protocol_version")
	f(rep(`"region":"eu-central"`, `"region":"EU"`), "region")
	f(rep(`"region":"eu-central"`, `"region":""`), "region")
	f(rep(`"region":"eu-central"`, `"region":"`+strings.Repeat("a", 33)+`"`), "region")
	f(rep(`"region":"eu-central"`, `"region":7`), "region")
	f(rep(`"build_version":"1.2.3"`, `"build_version":"1 2"`), "build_version")
	f(rep(`"build_version":"1.2.3"`, `"build_version":"`+strings.Repeat("1", 33)+`"`), "build_version")
	f(rep(`"display_name":"Test host"`, `"display_name":""`), "display_name")
	f(rep(`"display_name":"Test host"`, `"display_name":"a\u0007"`), "display_name")
	f(rep(`"display_name":"Test host"`, `"display_name":"a\u200e"`), "display_name") // Cf
	f(rep(`"display_name":"Test host"`, `"display_name":"`+strings.Repeat("é", 65)+`"`), "display_name")
	f(rep(`"display_name":"Test host"`, `"display_name":"\ud800"`), "display_name")
	f(rep(`"display_name":"Test host"`, "\"display_name\":\"a\xff\""), "display_name")
	f(rep(`"display_name":"Test host"`, "\"display_name\":\"a\tb\""), "body") // raw control char
	f(rep(`"visibility":"public"`, `"visibility":"private"`), "visibility")
	f(rep(`"trust_mode":"managed_dedicated"`, `"trust_mode":"x"`), "trust_mode")
	f(rep(`"current_players":1`, `"current_players":9`), "current_players")
	f(rep(`"max_players":8`, `"max_players":1025`), "max_players")
	f(strings.Replace(rep(`"max_players":8`, `"max_players":0`), `"current_players":1`, `"current_players":0`, 1), "max_players")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":[]`), "metadata")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{"Mode":"x"}`), "metadata")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{"":"x"}`), "metadata")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{"m":1}`), "metadata")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{"m":"`+strings.Repeat("v", 257)+`"}`), "metadata")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{"m":"a\u0001"}`), "metadata")
	var many []string
	for i := range 17 {
		many = append(many, `"k`+string(rune('a'+i))+`":"v"`)
	}
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{`+strings.Join(many, ",")+`}`), "metadata")
	f(rep(`"metadata":{"mode":"coop"}`, `"metadata":{"mode":"coop",}`), "body")
}

func TestDecodeRenew(t *testing.T) {
	const lease = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"
	tok := strings.Repeat("A", 43)
	ok := func(body string, want renewRequest) {
		t.Helper()
		var d decoder
		var r renewRequest
		if err := decodeRenew(&d, []byte(body), &r); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		want.Lease = engine.LeaseID{UUID: mustUUID(t, lease)}
		if r.Lease != want.Lease || r.TokenOK != want.TokenOK || r.ExpectedVersion != want.ExpectedVersion || r.CurrentPlayers != want.CurrentPlayers {
			t.Fatalf("decode %s: got %+v, want %+v", body, r, want)
		}
	}
	ok(`{"lease_id":"`+lease+`","lease_token":"`+tok+`","expected_version":3}`, renewRequest{TokenOK: true, ExpectedVersion: 3, CurrentPlayers: -1})
	ok(`{"current_players":null,"expected_version":1,"lease_token":"`+tok+`","lease_id":"`+lease+`"}`, renewRequest{TokenOK: true, ExpectedVersion: 1, CurrentPlayers: -1})
	ok(`{"lease_id":"`+lease+`","lease_token":"short","expected_version":3,"current_players":4}`, renewRequest{ExpectedVersion: 3, CurrentPlayers: 4})
	bad := func(body, field string) {
		t.Helper()
		var d decoder
		var r renewRequest
		err := decodeRenew(&d, []byte(body), &r)
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Fatalf("decode %s: got %v, want error for %s", body, err, field)
		}
	}
	bad(`{"lease_token":"`+tok+`","expected_version":3}`, "lease_id")
	bad(`{"lease_id":"`+lease+`","expected_version":3}`, "lease_token")
	bad(`{"lease_id":"`+lease+`","lease_token":"`+tok+`"}`, "expected_version")
	bad(`{"lease_id":"x","lease_token":"`+tok+`","expected_version":3}`, "lease_id")
	bad(`{"lease_id":"`+lease+`","lease_token":1,"expected_version":3}`, "lease_token")
	bad(`{"lease_id":"`+lease+`","lease_token":"`+tok+`","expected_version":"3"}`, "expected_version")
	bad(`{"lease_id":"`+lease+`","lease_token":"`+tok+`","expected_version":3.5}`, "expected_version")
	bad(`{"lease_id":"`+lease+`","lease_token":"`+tok+`","expected_version":3,"current_players":1025}`, "current_players")
	bad(`{"lease_id":"`+lease+`","lease_token":"`+tok+`","expected_version":3,"x":1}`, "x")
	bad(`{"lease_id":"`+lease+`","lease_id":"`+lease+`","lease_token":"`+tok+`","expected_version":3}`, "lease_id")
}

func TestDecodeJoinAndRevocation(t *testing.T) {
	var d decoder
	if pv, ro, err := decodeJoin(&d, []byte(` {"protocol_version":7} `)); err != nil || pv != 7 || ro {
		t.Fatalf("decodeJoin: %d, %v, %v", pv, ro, err)
	}
	for body, want := range map[string]bool{
		`{"protocol_version":7,"relay_only":true}`:    true,
		`{"relay_only":false,"protocol_version":7}`:   false,
		`{"protocol_version":7, "relay_only" : true}`: true,
	} {
		if pv, ro, err := decodeJoin(&d, []byte(body)); err != nil || pv != 7 || ro != want {
			t.Fatalf("decodeJoin %s: %d, %v, %v", body, pv, ro, err)
		}
	}
	badJoin := func(body, field string) {
		t.Helper()
		_, _, err := decodeJoin(&d, []byte(body))
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Fatalf("decodeJoin %s: got %v, want error for %s", body, err, field)
		}
	}
	badJoin(`{}`, "protocol_version")
	badJoin(`{"protocol_version":7,"protocol_version":7}`, "protocol_version")
	badJoin(`{"protocol_version":"7"}`, "protocol_version")
	badJoin(`{"protocol_version":7,"x":null}`, "x")
	badJoin(`{"protocol_version":7}]`, "body")
	badJoin(`{"protocol_version":7,"relay_only":1}`, "relay_only")
	badJoin(`{"protocol_version":7,"relay_only":"true"}`, "relay_only")
	badJoin(`{"protocol_version":7,"relay_only":null}`, "relay_only")
	badJoin(`{"protocol_version":7,"relay_only":tru}`, "body")
	badJoin(`{"protocol_version":7,"relay_only":true,"relay_only":true}`, "relay_only")

	s, ttl, err := decodeRevocation(&d, []byte(`{"subject":"pub-1","ttl_s":600}`))
	if err != nil || s != "pub-1" || ttl != 600 {
		t.Fatalf("decodeRevocation: %q %d %v", s, ttl, err)
	}
	badRev := func(body, field string) {
		t.Helper()
		_, _, err := decodeRevocation(&d, []byte(body))
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Fatalf("decodeRevocation %s: got %v, want error for %s", body, err, field)
		}
	}
	badRev(`{"subject":"a","ttl_s":0}`, "ttl_s")
	badRev(`{"subject":"a","ttl_s":601}`, "ttl_s")
	badRev(`{"subject":"","ttl_s":6}`, "subject")
	badRev(`{"subject":"a\u0000","ttl_s":6}`, "subject")
	badRev(`{"ttl_s":6}`, "subject")
	badRev(`{"subject":"a"}`, "ttl_s")
}

func mustUUID(t testing.TB, s string) engine.UUID {
	t.Helper()
	u, ok := engine.ParseUUID(s)
	if !ok {
		t.Fatalf("bad UUID %q", s)
	}
	return u
}
