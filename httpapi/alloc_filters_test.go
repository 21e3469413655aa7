//go:build !race

package httpapi

import (
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// A browse with player filters, an order and a cursor allocates nothing,
// as an unfiltered one: the filters live in the request's scratch. (An
// attribute filter allocates only the strings it names.)
func TestFilteredBrowseAllocations(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	d.fill(t, 150, 100)
	first := newCtx("GET", "/v1/listings?protocol_version=7&region=eu-central&limit=20&min_free_slots=1&max_players=6&order=-current_players", tokCli)
	wantServedFree(t, d, "filtered browse", first)
	body := string(first.Response.Body())
	i := strings.Index(body, `"next_cursor":"`)
	if i < 0 {
		t.Fatalf("no next_cursor: %s", body)
	}
	c := body[i+len(`"next_cursor":"`):]
	c = c[:strings.IndexByte(c, '"')]
	next := newCtx("GET", "/v1/listings?protocol_version=7&region=eu-central&limit=20&min_free_slots=1&max_players=6&order=-current_players&cursor="+c, tokCli)
	wantServedFree(t, d, "filtered browse from a cursor", next)
}
