package httpapi

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func TestJoinAttempt(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	join := func(token, id, key, body string) req {
		q := req{method: "POST", path: "/v1/listings/" + id + "/join-attempts", token: token, body: body}
		if key != "" {
			q.headers = []string{"Idempotency-Key", key}
		}
		return q
	}
	r := h.expect(join(tokCli, l.id, "j1", `{"protocol_version":7}`), 201, "")
	h.secrets = append(h.secrets, r.str("token"))
	if r.str("mediator") != "127.0.0.1:3478" || r.num("ttl_s") != 30 || len(r.str("token")) != 43 ||
		r.str("expires_at") != "2026-07-16T00:00:30.000Z" || r.str("listing_id") != l.id {
		t.Fatalf("join: %s", r.body)
	}
	hd := engine.Handle{UUID: mustUUID(t, r.str("handle"))}
	c := h.keys.AttemptClient(hd)
	if string(c.AppendToken(nil)) != r.str("token") {
		t.Fatal("attempt token is not the client capability")
	}
	if h.offers.count() != 1 || h.offers.offers[0].Handle != hd || h.offers.offers[0].HostPresence.String() != l.presence {
		t.Fatalf("offers: %+v", h.offers.offers)
	}
	// Exact replay: same answer, no second OFFER, nothing changed.
	before := h.store.Snapshot()
	r2 := h.expect(join(tokCli, l.id, "j1", ` { "protocol_version" : 7 } `), 200, "")
	if r2.header["Idempotent-Replay"] != "true" || string(r2.body) != string(r.body) || h.offers.count() != 1 {
		t.Fatalf("replay: %v %s", r2.header, r2.body)
	}
	if h.store.Snapshot() != before {
		t.Fatal("replay changed the store")
	}
	h.rejected(join(tokCli, l.id, "j1", `{"protocol_version":8}`), 409, "conflict")
	h.rejected(join(tokCli, l.id, "j2", `{"protocol_version":8}`), 404, "not_found")
	h.rejected(join(tokOtherCli, l.id, "j2", `{"protocol_version":7}`), 404, "not_found")
	h.rejected(join(tokCli, engine.NewUUID().String(), "j2", `{"protocol_version":7}`), 404, "not_found")
	h.rejected(join(tokCli, "x", "j2", `{"protocol_version":7}`), 400, "invalid_request")
	h.rejected(join(tokCli, l.id, "", `{"protocol_version":7}`), 400, "invalid_request")
	h.rejected(join(tokCli, l.id, "j2", `{"protocol_version":"7"}`), 400, "invalid_request")
	h.rejected(join(tokCli, l.id, "j2", `{}`), 400, "invalid_request")
	h.rejected(join(tokPub, l.id, "j2", `{"protocol_version":7}`), 403, "forbidden")
	h.expect(join(tokBoth, l.id, "j1", `{"protocol_version":7}`), 201, "") // keys are per subject
	if h.offers.count() != 2 {
		t.Fatalf("offers: %d", h.offers.count())
	}
	// Without fresh presence the listing is not joinable.
	l2 := h.create(tokPub, listingBody("eu", 7, "public"))
	h.rejected(join(tokCli, l2.id, "j3", `{"protocol_version":7}`), 404, "not_found")
	// A replay after the attempt is gone is 410 (the key outlives it).
	h.clock.Advance(15 * time.Second)
	h.bindPresence(l, 2)
	h.clock.Advance(16 * time.Second)
	h.rejected(join(tokCli, l.id, "j1", `{"protocol_version":7}`), 410, "expired")
	if h.offers.count() != 2 {
		t.Fatalf("offers: %d", h.offers.count())
	}
}
