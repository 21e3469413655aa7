package storetest

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runAttempt covers attempt creation views, endpoint binding per role,
// capabilities, the one-time introduction and its read-back.
func runAttempt(t *testing.T, f Factory) {
	t.Run("CreatedView", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		if a.ID.IsZero() || a.Handle.IsZero() || a.Handle.UUID == a.ID.UUID || a.Handle == v.Presence {
			t.Fatalf("attempt IDs zero or shared")
		}
		if a.Listing != v.ID || a.Tenant != tenant || a.Client != "client-1" || a.Consumed ||
			a.Host.Bound() || a.Peer.Bound() || a.HostPresence != v.Presence || a.HostPresencePublic != pub(40000) {
			t.Fatalf("attempt view fields wrong: %+v", a)
		}
		if h, ok := e.s.AttemptHost(a.Handle); !ok || h != v.Presence {
			t.Fatalf("AttemptHost = ok %v", ok)
		}
		e.wantAttempt(engine.Handle{UUID: engine.NewUUID()}, false, "AttemptHost finds an unknown handle")
		e.wantAttempt(v.Presence, false, "AttemptHost treats a presence handle as an attempt")
		b := e.attempt(v, "client-1")
		if b.ID == a.ID || b.Handle == a.Handle {
			t.Fatalf("two attempts share IDs")
		}
		// Unknown listing.
		c := e.attemptCmd(v, "client-1")
		c.Listing = engine.ListingID{UUID: engine.NewUUID()}
		e.unchanged("join unknown listing", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, c)
			e.want("CreateJoinAttempt on an unknown listing", r, err, engine.NotFound)
		})
		// Unlisted listings are joinable by ID.
		uc := e.listingCmd("publisher-1")
		uc.Spec.Visibility = engine.Unlisted
		u := e.create(uc)
		e.presence(u, 1, pub(3))
		e.attempt(u, "client-1")
	})

	t.Run("BindSemantics", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		other := e.attempt(v, "client-2")
		host := e.bindCmd(a, engine.RoleHost, pub(10), lan(10))
		client := e.bindCmd(a, engine.RoleClient, otherPub(20), lan(20))
		// Wrong keys: each role's key only works for that role and handle.
		wrongs := []engine.BindAttempt{host, host, client, client, host}
		wrongs[0].Key = client.Key                              // client key as host
		wrongs[1].Key = e.hostKey(a.HostPresence, other.Handle) // other attempt's host key
		wrongs[2].Key = host.Key                                // host key as client
		wrongs[3].Key = e.clientKey(other.Handle)               // other attempt's client key
		wrongs[4].Key = e.presenceKey(v.Presence)               // the presence key itself
		for _, w := range wrongs {
			e.unchanged("bind with a wrong key", func() {
				e.wantBind(w, engine.NotFound, "bind with a wrong key")
			})
		}
		unknown := client
		unknown.Handle = engine.Handle{UUID: engine.NewUUID()}
		unknown.Key = e.clientKey(unknown.Handle)
		e.unchanged("bind unknown", func() {
			e.wantBind(unknown, engine.NotFound, "bind of an unknown handle")
		})
		av, r := e.bind(client)
		if !r.OK() || r.Replay || av.Peer.Public != client.Public || av.Peer.Local != client.Local || av.Host.Bound() {
			t.Fatalf("client bind: %v replay=%v", r.Outcome, r.Replay)
		}
		_, r2, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction with one side bound", r2, err, engine.Conflict)
		_, r2, err = e.s.Introduction(e.ctx, a.Handle)
		e.want("Introduction before consumption", r2, err, engine.Conflict)
		for _, d := range []engine.BindAttempt{withPublic(client, otherPub(21)), withLocal(client, lan(21)), withLocal(client, netipZero)} {
			e.unchanged("different client endpoint", func() {
				e.wantBind(d, engine.ReplayRejected, "second, different client endpoint")
			})
		}
		av, r = e.bind(host)
		if !r.OK() || r.Replay || av.Host.Public != host.Public || av.Host.Local != host.Local || av.Consumed {
			t.Fatalf("host bind: %v replay=%v", r.Outcome, r.Replay)
		}
		in, r2, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction", r2, err, engine.Success)
		wantIntro := engine.Introduction{Attempt: a.ID, Handle: a.Handle,
			Host:   engine.Binding{Public: host.Public, Local: host.Local},
			Client: engine.Binding{Public: client.Public, Local: client.Local}}
		if in != wantIntro {
			t.Fatalf("introduction %+v, want %+v", in, wantIntro)
		}
		e.unchanged("after consumption", func() {
			back, r, err := e.s.Introduction(e.ctx, a.Handle)
			e.want("Introduction read-back", r, err, engine.Success)
			if back != wantIntro {
				t.Fatalf("read-back %+v differs", back)
			}
			_, r, err = e.s.ConsumeIntroduction(e.ctx, a.Handle)
			e.want("second ConsumeIntroduction", r, err, engine.ReplayRejected)
			// Retransmitted identical binds stay idempotent successes.
			for _, c := range []engine.BindAttempt{host, client} {
				av, r := e.bind(c)
				if !r.OK() || !r.Replay || !av.Consumed {
					t.Fatalf("identical bind after consumption: %v replay=%v consumed=%v", r.Outcome, r.Replay, av.Consumed)
				}
			}
			e.wantBind(withPublic(host, pub(11)), engine.ReplayRejected, "different host endpoint after consumption")
		})
		_, r2, err = e.s.Introduction(e.ctx, engine.Handle{UUID: engine.NewUUID()})
		e.want("Introduction of an unknown handle", r2, err, engine.NotFound)
		_, r2, err = e.s.ConsumeIntroduction(e.ctx, engine.Handle{UUID: engine.NewUUID()})
		e.want("ConsumeIntroduction of an unknown handle", r2, err, engine.NotFound)
		// The other attempt is independent.
		_, r2, err = e.s.ConsumeIntroduction(e.ctx, other.Handle)
		e.want("ConsumeIntroduction of an unbound attempt", r2, err, engine.Conflict)
	})

	t.Run("IPv6Endpoints", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		p6 := mustAP("[2001:db8::1]:40000")
		e.presence(v, 1, p6)
		g := e.wantGet(v.ID, true, engine.Success)
		if g.HostPublic != p6 {
			t.Fatalf("IPv6 presence endpoint not kept")
		}
		a := e.attempt(g, "client-1")
		av, r := e.bind(e.bindCmd(a, engine.RoleClient, mustAP("[2001:db8::2]:1"), mustAP("[fe80::1]:2")))
		if !r.OK() || av.Peer.Public != mustAP("[2001:db8::2]:1") {
			t.Fatalf("IPv6 bind: %v", r.Outcome)
		}
	})
}

func withPublic(c engine.BindAttempt, p netipAddrPort) engine.BindAttempt { c.Public = p; return c }
func withLocal(c engine.BindAttempt, p netipAddrPort) engine.BindAttempt  { c.Local = p; return c }
