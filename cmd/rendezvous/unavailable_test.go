package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestUnavailableStoreFailsClosed: once the store is marked unavailable
// (engine.Store.MarkUnavailable, the fail-closed switch for a store that
// lost its authority; the server never throws it by itself, so the test
// does, on the server start assembles, on either store) every answer
// over real sockets is typed: readiness 503 "unavailable", every store
// route 503 service_unavailable with Retry-After, UDP refreshes and binds a
// signed 503 (a host bind, whose key needs the erased attempt, an unsigned
// 401), and nothing comes back: the state is erased. Liveness and plain
// STUN Binding do not depend on the store.
func TestUnavailableStoreFailsClosed(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		c, err := parseConfig(append(storeArgs, "--dev", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"), envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		s, err := start(c, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		s.med.Start()
		defer s.close()
		p := &proc{t: t, httpAddr: s.httpAddr.String(), mediator: s.mediatorAddr, tokens: s.devTokens, client: httpClient}

		h := publishHost(t, p, "unavailable-1", "Unavailable host")
		j := p.join("unavailable-join-1", h.pub.ListingID)
		a := mustHandle(t, j.Handle)
		h.offered(a)

		s.store.MarkUnavailable()

		r := p.call("GET", "/readyz", "", nil)
		if r.status != http.StatusServiceUnavailable || string(r.body) != `{"status":"unavailable"}` {
			t.Fatalf("readyz: %d %s, want 503 unavailable", r.status, r.body)
		}
		p.call("GET", "/livez", "", nil).expect(t, "livez", http.StatusOK, nil)
		lease := map[string]any{"lease_id": h.pub.Lease.LeaseID, "lease_token": h.pub.Lease.Token, "expected_version": 1}
		id := h.pub.ListingID
		f := func(name string, r httpReply) {
			t.Helper()
			if r.status != http.StatusServiceUnavailable || r.problemCode(t) != "service_unavailable" || r.header.Get("Retry-After") == "" {
				t.Fatalf("%s: %d %v %s, want 503 service_unavailable with Retry-After", name, r.status, r.header, r.body)
			}
		}
		f("publish", p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody("late"), "Idempotency-Key", "unavailable-2"))
		f("publish replay", p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody("Unavailable host"), "Idempotency-Key", "unavailable-1"))
		f("renew", p.call("PUT", "/v1/listings/"+id+"/lease", p.tokens["publisher"], lease))
		f("get", p.call("GET", "/v1/listings/"+id, p.tokens["client"], nil))
		f("browse", p.call("GET", "/v1/listings?protocol_version=7", p.tokens["client"], nil))
		f("join", p.call("POST", "/v1/listings/"+id+"/join-attempts", p.tokens["client"], map[string]any{"protocol_version": 7}, "Idempotency-Key", "unavailable-join-2"))
		f("delete", p.call("DELETE", "/v1/listings/"+id, p.tokens["publisher"], nil, "Lease-Id", h.pub.Lease.LeaseID, "Lease-Token", h.pub.Lease.Token))

		var st struct {
			Available bool `json:"available"`
			Pools     map[string]struct {
				Used int `json:"used"`
			} `json:"pools"`
		}
		p.call("GET", "/v1/admin/stats", statsToken(p.tokens), nil).expect(t, "stats", http.StatusOK, &st)
		if st.Available {
			t.Fatalf("stats: available true after the store was marked unavailable")
		}
		for _, pool := range []string{"listings", "presence", "attempts", "idempotency"} {
			if st.Pools[pool].Used != 0 {
				b, _ := json.Marshal(st)
				t.Fatalf("stats %s: pool %s still holds state", b, pool)
			}
		}

		// UDP: a presence refresh and a client bind verify and get a signed
		// 503; a host bind cannot derive its key any more: unsigned 401.
		h.seq++
		tx := h.peer.request(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
		wantUDPError(t, h.peer, tx, &h.cap, 503)
		clientCap := mustToken(t, j.Token)
		client := newPeer(t, j.Mediator)
		tx = client.request(stun.KindAttemptClient, a, &clientCap, 0, clientLAN)
		wantUDPError(t, client, tx, &clientCap, 503)
		hostCap := engine.HostAttemptCapability(&h.cap, a)
		tx = h.peer.request(stun.KindAttemptHost, a, &hostCap, 0, hostLAN)
		wantUDPError(t, h.peer, tx, nil, 401)
		tx = client.plainBinding()
		if m := client.read(); m.Type() != stun.BindingSuccess || m.TransactionID() != tx {
			t.Fatalf("plain Binding while unavailable: type %#x", m.Type())
		}
	})
}

// wantUDPError reads the answer to tx: an error with code, signed with key
// (nil: unsigned).
func wantUDPError(t *testing.T, u *udpPeer, tx [12]byte, key *engine.Capability, code int) {
	t.Helper()
	m := u.read()
	u.checkTx(m, tx)
	got, _, _ := m.ErrorCode()
	if m.Type() != stun.BindingError || got != code {
		t.Fatalf("answer type %#x error %d, want error %d", m.Type(), got, code)
	}
	if signed := key != nil && m.CheckIntegrity(key[:]); signed != (key != nil) || (key == nil && m.HasIntegrity()) {
		t.Fatalf("error %d: signed %v, want signed %v", code, m.HasIntegrity(), key != nil)
	}
}
