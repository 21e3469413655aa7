package openapitest

import (
	"strings"
	"testing"
)

// The description accepts browse's filter, order and cursor parameters and
// quick join's route, and refuses what the server refuses.
func TestFilterParameters(t *testing.T) {
	page := `{"items":[{"listing_id":"` + listingID + `","region":"eu","protocol_version":7,"build_version":"1",` +
		`"display_name":"x","trust_mode":"player_hosted","max_players":4,"metadata":{},"current_players":2,` +
		`"attributes":{"level":12,"mode":"coop"},"lease_expires_at":"2026-01-02T03:04:05.000Z"}],` +
		`"next_after":null,"next_cursor":"` + strings.Repeat("A", 47) + `"}`
	for _, q := range []string{
		"protocol_version=7&min_free_slots=1&attr.mode=coop&order=-current_players",
		"protocol_version=7&attr.mode=coop|pvp&attr.level.ge=3&attr.level.lt=20&min_players=1&max_players=4",
		"protocol_version=7&order=created_at&cursor=" + strings.Repeat("A", 47),
	} {
		if faults := (exchange{method: "GET", path: "/v1/listings?" + q, status: 200, respHeader: jsonCT, respBody: page}).check(t); len(faults) > 0 {
			t.Errorf("%s: %v", q, faults)
		}
	}
	for _, q := range []string{
		"protocol_version=7&attr.Mode=coop",
		"protocol_version=7&attr.level.gte=3",
		"protocol_version=7&attr.level.ge=x",
		"protocol_version=7&order=players",
		"protocol_version=7&min_free_slots=2000",
	} {
		faults := (exchange{method: "GET", path: "/v1/listings?" + q, status: 200, respHeader: jsonCT, respBody: page}).check(t)
		if len(faults) == 0 {
			t.Errorf("%s: the description accepts it", q)
		}
	}
	attempt := `{"attempt_id":"` + listingID + `","listing_id":"` + listingID + `","handle":"` + listingID + `","token":"` + token43 +
		`","mediator":"127.0.0.1:3478","expires_at":"2026-01-02T03:04:05.000Z","ttl_s":30,"relay_only":false}`
	for _, body := range []string{"", `{"relay_only":false}`} {
		e := exchange{method: "POST", path: "/v1/quick-join?protocol_version=7&min_free_slots=1&attr.mode=coop",
			reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: body, status: 201, respHeader: jsonCT, respBody: attempt}
		if faults := e.check(t); len(faults) > 0 {
			t.Errorf("quick join %q: %v", body, faults)
		}
	}
	if faults := (exchange{method: "POST", path: "/v1/listings/" + listingID + "/join-attempts",
		reqHeader: []string{"Idempotency-Key", "k1"}, reqBody: `{"protocol_version":7}`,
		status: 409, respHeader: problemCT, respBody: problem(409, "listing_full", "")}).check(t); len(faults) > 0 {
		t.Errorf("listing_full: %v", faults)
	}
}
