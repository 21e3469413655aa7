package main

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// filterItem is a browse item's members the filters read.
type filterItem struct {
	ListingID      string         `json:"listing_id"`
	CurrentPlayers int            `json:"current_players"`
	MaxPlayers     int            `json:"max_players"`
	Attributes     map[string]any `json:"attributes"`
}

type filterPage struct {
	Items      []filterItem `json:"items"`
	NextAfter  *string      `json:"next_after"`
	NextCursor *string      `json:"next_cursor"`
}

// TestE2EFiltersAndQuickJoin: listings published with attributes and
// player counts through the real binary; a server browser's "not full,
// mode = coop, most players first" walked with next_cursor; attributes
// renewed and seen changed; quick join (and its replay, its 404) and the
// 409 listing_full of a plain join to a full listing. Every exchange is
// checked against the OpenAPI description.
func TestE2EFiltersAndQuickJoin(t *testing.T) { eachStore(t, e2eFilters) }

func e2eFilters(t *testing.T, storeArgs []string) {
	p := startProc(t, storeArgs...)
	cli := p.tokens["client"]
	hosts := map[string]*host{}
	mk := func(name string, cur, max int, attrs map[string]any) string {
		t.Helper()
		body := listingBody(name)
		body["current_players"], body["max_players"] = cur, max
		if attrs != nil {
			body["attributes"] = attrs
		}
		var pub published
		p.call("POST", "/v1/listings", p.tokens["publisher"], body, "Idempotency-Key", "filters-"+name).
			expect(t, "publish "+name, http.StatusCreated, &pub)
		hosts[name] = presenceOn(t, p, pub)
		return pub.ListingID
	}
	busy := mk("busy", 6, 8, map[string]any{"mode": "coop", "level": 5})
	midA := mk("mid-a", 3, 8, map[string]any{"mode": "coop", "level": 12})
	midB := mk("mid-b", 3, 8, map[string]any{"mode": "coop", "level": 2})
	quiet := mk("quiet", 1, 8, map[string]any{"mode": "coop"})
	full := mk("full", 4, 4, map[string]any{"mode": "coop"})
	pvp := mk("pvp", 7, 8, map[string]any{"mode": "pvp"})
	mk("plain", 5, 8, nil)
	mids := []string{midA, midB}
	slices.Sort(mids)
	slices.Reverse(mids) // ties go by listing ID in the order's direction

	// walk follows next_cursor from query's first page to the end.
	walk := func(query string) (ids []string, players []int) {
		t.Helper()
		next := ""
		for range 20 {
			var page filterPage
			p.call("GET", "/v1/listings?"+query+next, cli, nil).expect(t, "browse "+query, http.StatusOK, &page)
			for _, it := range page.Items {
				ids = append(ids, it.ListingID)
				players = append(players, it.CurrentPlayers)
			}
			if page.NextAfter != nil && !strings.Contains(query, "order=id") && strings.Contains(query, "order=") {
				t.Fatalf("next_after %s in another order than id", *page.NextAfter)
			}
			if page.NextCursor == nil {
				return ids, players
			}
			next = "&cursor=" + *page.NextCursor
		}
		t.Fatalf("browse %s: no end after 20 pages", query)
		return nil, nil
	}
	serverBrowser := "protocol_version=7&min_free_slots=1&attr.mode=coop&order=-current_players&limit=2"
	ids, players := walk(serverBrowser)
	if want := []string{busy, mids[0], mids[1], quiet}; !slices.Equal(ids, want) || !slices.Equal(players, []int{6, 3, 3, 1}) {
		t.Fatalf("not full, coop, most players first: %v (players %v), want %v", ids, players, want)
	}
	if ids, _ := walk("protocol_version=7&attr.level.ge=3&attr.level.lt=20&order=-id"); !slices.Equal(ids, sortedDesc(busy, midA)) {
		t.Fatalf("3 <= level < 20: %v", ids)
	}
	if ids, _ := walk("protocol_version=7&max_players=1&attr.mode=coop|pvp"); len(ids) != 1 || ids[0] != quiet {
		t.Fatalf("at most one player, coop or pvp: %v", ids)
	}
	var one filterPage
	p.call("GET", "/v1/listings?protocol_version=7&attr.mode=pvp", cli, nil).expect(t, "browse pvp", http.StatusOK, &one)
	if len(one.Items) != 1 || one.Items[0].ListingID != pvp || !reflect.DeepEqual(one.Items[0].Attributes, map[string]any{"mode": "pvp"}) {
		t.Fatalf("pvp: %+v", one)
	}
	// A malformed filter is a 400 naming it.
	r := p.call("GET", "/v1/listings?protocol_version=7&attr.level.gte=3", cli, nil)
	if r.status != http.StatusBadRequest || r.problemCode(t) != "invalid_request" || !strings.Contains(string(r.body), "attr.level.gte") {
		t.Fatalf("a bad comparison: %d %s", r.status, r.body)
	}

	// The quiet host switches to pvp and gains a player: the coop walk
	// loses it, GET and the pvp filter see the change.
	renew := func(name string, version int, body map[string]any) {
		t.Helper()
		h := hosts[name]
		body["lease_id"], body["lease_token"], body["expected_version"] = h.pub.Lease.LeaseID, h.pub.Lease.Token, version
		p.call("PUT", "/v1/listings/"+h.pub.ListingID+"/lease", p.tokens["publisher"], body).expect(t, "renew "+name, http.StatusOK, nil)
	}
	renew("quiet", 1, map[string]any{"current_players": 2, "attributes": map[string]any{"mode": "pvp", "level": 30}})
	var doc filterItem
	p.call("GET", "/v1/listings/"+quiet, cli, nil).expect(t, "get quiet", http.StatusOK, &doc)
	if doc.CurrentPlayers != 2 || !reflect.DeepEqual(doc.Attributes, map[string]any{"mode": "pvp", "level": 30.0}) {
		t.Fatalf("renewed listing: %+v", doc)
	}
	if ids, _ := walk(serverBrowser); !slices.Equal(ids, []string{busy, mids[0], mids[1]}) {
		t.Fatalf("coop after the renewal: %v", ids)
	}
	if ids, _ := walk("protocol_version=7&attr.mode=pvp&order=current_players"); !slices.Equal(ids, []string{quiet, pvp}) {
		t.Fatalf("pvp after the renewal, fewest players first: %v", ids)
	}

	// Quick join lands on the busiest coop listing with room; its replay
	// answers the same attempt, the host is offered it once.
	quick := func(key, query string) httpReply {
		return p.call("POST", "/v1/quick-join?protocol_version=7&"+query, cli, nil, "Idempotency-Key", key)
	}
	var qj struct {
		joined
		ListingID string `json:"listing_id"`
	}
	quick("filters-quick-1", "attr.mode=coop").expect(t, "quick join", http.StatusCreated, &qj)
	if qj.ListingID != busy {
		t.Fatalf("quick join chose %s, want the busiest coop listing %s", qj.ListingID, busy)
	}
	hosts["busy"].offered(mustHandle(t, qj.Handle))
	r = quick("filters-quick-1", "attr.mode=coop")
	var again struct {
		AttemptID string `json:"attempt_id"`
	}
	r.expect(t, "quick join replay", http.StatusOK, &again)
	if again.AttemptID != qj.AttemptID || r.header.Get("Idempotent-Replay") != "true" {
		t.Fatalf("quick join replay: %s %v", r.body, r.header)
	}
	if r := quick("filters-quick-2", "attr.mode=ctf"); r.status != http.StatusNotFound || r.problemCode(t) != "not_found" {
		t.Fatalf("quick join that nothing matches: %d %s", r.status, r.body)
	}
	// The busy host fills up: quick join passes it by, a join is refused.
	renew("busy", 1, map[string]any{"current_players": 8})
	quick("filters-quick-3", "attr.mode=coop").expect(t, "quick join after the busiest filled", http.StatusCreated, &qj)
	if qj.ListingID != mids[0] {
		t.Fatalf("quick join chose %s, want %s (most players not full, then the highest ID)", qj.ListingID, mids[0])
	}
	for _, id := range []string{full, busy} {
		r := p.call("POST", "/v1/listings/"+id+"/join-attempts", cli, map[string]any{"protocol_version": 7}, "Idempotency-Key", "filters-join-"+id)
		if r.status != http.StatusConflict || r.problemCode(t) != "listing_full" {
			t.Fatalf("join of a full listing: %d %s", r.status, r.body)
		}
	}
}

// sortedDesc is ids in descending order.
func sortedDesc(ids ...string) []string {
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids
}
