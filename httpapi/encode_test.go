package httpapi

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func TestAppendString(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got := string(appendString(nil, in))
		if got != want {
			t.Fatalf("appendString(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("appendString(%q) = %s is not JSON: %v", in, got, err)
		}
	}
	f("", `""`)
	f("plain", `"plain"`)
	f(`q"b\`, `"q\"b\\"`)
	f("a\nb\tc\r\x01\x1f", `"a\nb\tc\r\u0001\u001f"`)
	f("héllo ✓ 🎮", `"héllo ✓ 🎮"`)
	f("bad\xffutf8", `"bad\ufffdutf8"`)
}

func TestListingItem(t *testing.T) {
	spec := &engine.ListingSpec{
		Region: "eu", ProtocolVersion: 7, BuildVersion: "1.0", DisplayName: `Ann's "game"`,
		Visibility: engine.Unlisted, TrustMode: engine.PlayerHosted, CurrentPlayers: 1, MaxPlayers: 8,
		Metadata: []engine.MetaEntry{{Key: "a", Value: "1"}, {Key: "b", Value: "x\ny"}},
	}
	v := engine.ListingView{
		ID: engine.ListingID{UUID: mustUUID(t, "00000000-0000-4000-8000-0000000000AB")}, Spec: spec,
		CurrentPlayers: 3, LeaseExpiresAt: time.Date(2026, 7, 16, 1, 2, 3, 4e6, time.UTC),
	}
	withoutDoc := string(appendListingItem(nil, &v, true))
	v.Doc = listingDoc(spec)
	withDoc := string(appendListingItem(nil, &v, true))
	if withDoc != withoutDoc {
		t.Fatalf("document and spec encodings differ:\n%s\n%s", withDoc, withoutDoc)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(withDoc), &got); err != nil {
		t.Fatalf("item is not JSON: %v\n%s", err, withDoc)
	}
	want := map[string]any{
		"listing_id": "00000000-0000-4000-8000-0000000000ab", "region": "eu", "protocol_version": 7.0,
		"build_version": "1.0", "display_name": `Ann's "game"`, "trust_mode": "player_hosted",
		"max_players": 8.0, "metadata": map[string]any{"a": "1", "b": "x\ny"}, "current_players": 3.0,
		"lease_expires_at": "2026-07-16T01:02:03.004Z", "visibility": "unlisted",
	}
	if len(got) != len(want) {
		t.Fatalf("item has %d members, want %d: %s", len(got), len(want), withDoc)
	}
	for k, w := range want {
		gb, _ := json.Marshal(got[k])
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Fatalf("member %s = %s, want %s", k, gb, wb)
		}
	}
}

func TestAppendTime(t *testing.T) {
	f := func(tm time.Time) {
		t.Helper()
		want := `"` + tm.UTC().Format(timeLayout) + `"`
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("appendTime(%v) = %s, want %s", tm, got, want)
		}
	}
	f(time.Date(2026, 7, 16, 0, 1, 0, 0, time.UTC))
	f(time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
	f(time.Date(1, 1, 1, 0, 0, 0, 1e6, time.UTC))
	f(time.Date(2026, 7, 16, 1, 2, 3, 4e6, time.FixedZone("x", 5*3600+1800)))
	f(time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC))
	f(time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := range 1000 {
		f(time.Unix(int64(i)*7919*86400+int64(i)*3, int64(i)*1_234_567))
	}
}

func TestAppendUUIDAndInt(t *testing.T) {
	for range 1000 {
		u := engine.NewUUID()
		if got, want := string(appendUUID(nil, u)), `"`+u.String()+`"`; got != want {
			t.Fatalf("appendUUID = %s, want %s", got, want)
		}
	}
	var zero, ones engine.UUID
	for i := range ones {
		ones[i] = 0xff
	}
	if string(appendUUID([]byte("x"), zero)) != `x"00000000-0000-0000-0000-000000000000"` ||
		string(appendUUID(nil, ones)) != `"ffffffff-ffff-ffff-ffff-ffffffffffff"` {
		t.Fatalf("appendUUID edge cases")
	}
	for _, v := range []int64{0, 1, 9, 10, 42, 99, 100, 1024, -1, -10, -99, 1 << 40} {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %s", v, got)
		}
	}
}
