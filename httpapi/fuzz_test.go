package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// The decoders must never panic, must accept only valid JSON, and what they
// accept must survive a re-encoding with the same canonical fingerprint.

func FuzzDecodeCreateListing(f *testing.F) {
	f.Add([]byte(validCreateBody))
	f.Add([]byte(`{"region":"eu","protocol_version":1,"build_version":"1","display_name":"\ud83c\udfae","visibility":"unlisted","trust_mode":"player_hosted","current_players":0,"max_players":1,"metadata":null}`))
	f.Add([]byte(`{"metadata":{"a":"\u0000"}}`))
	f.Add([]byte(`{"region":"eu","region":"eu"}`))
	f.Add([]byte(`[1,{"a":[true,false,null]},-0.5e+3]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var d decoder
		var spec engine.ListingSpec
		if err := decodeCreateListing(&d, body, &spec); err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if err := spec.Validate(); err != nil {
			t.Fatalf("accepted an invalid spec: %v", err)
		}
		re := append([]byte{'{'}, appendListingDoc(nil, &spec)...)
		re = append(re, `,"visibility":`...)
		re = appendString(re, spec.Visibility.String())
		re = append(re, `,"current_players":`...)
		re = appendInt(re, int64(spec.CurrentPlayers))
		re = append(re, '}')
		var again engine.ListingSpec
		if err := decodeCreateListing(&d, re, &again); err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", re, err)
		}
		if again.Hash() != spec.Hash() {
			t.Fatalf("fingerprint changed through re-encoding %s", re)
		}
	})
}

func FuzzDecodeRenew(f *testing.F) {
	f.Add([]byte(`{"lease_id":"0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0","lease_token":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","expected_version":3,"current_players":2}`))
	f.Add([]byte(`{"current_players":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var d decoder
		var r renewRequest
		if err := decodeRenew(&d, body, &r); err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if r.ExpectedVersion == 0 || r.CurrentPlayers < -1 || r.CurrentPlayers > engine.MaxPlayers {
			t.Fatalf("accepted out-of-range values %+v", r)
		}
	})
}

func FuzzDecodeJoinRevocation(f *testing.F) {
	f.Add([]byte(`{"protocol_version":7}`))
	f.Add([]byte(`{"subject":"pub-1","ttl_s":60}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var d decoder
		if pv, _, err := decodeJoin(&d, body); err == nil && (pv == 0 || !json.Valid(body)) {
			t.Fatalf("decodeJoin accepted %q", body)
		}
		if s, ttl, err := decodeRevocation(&d, body); err == nil && (s.Validate() != nil || ttl < 1 || ttl > 600 || !json.Valid(body)) {
			t.Fatalf("decodeRevocation accepted %q", body)
		}
	})
}
