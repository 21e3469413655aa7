package storetest

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runPresence covers heartbeats: whole-endpoint replacement, the strictly
// increasing sequence that survives presence expiry, and the pending list.
func runPresence(t *testing.T, f Factory) {
	t.Run("WholeEndpointReplacement", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		c := e.presenceCmd(v, 1, pub(1))
		c.Local = lan(1)
		if _, r, err := e.s.BindHostPresence(e.ctx, c); err != nil || !r.OK() {
			t.Fatalf("BindHostPresence = %v, %v", r.Outcome, err)
		}
		g := e.wantGet(v.ID, true, engine.Success)
		if !g.PresenceFresh || g.HostPublic != pub(1) || g.HostLocal != lan(1) {
			t.Fatalf("presence endpoints not recorded")
		}
		// A NAT rebinding replaces the whole endpoint, local included.
		e.presence(v, 2, otherPub(2))
		g = e.wantGet(v.ID, true, engine.Success)
		if g.HostPublic != otherPub(2) || g.HostLocal.IsValid() {
			t.Fatalf("presence replacement kept the old local endpoint or missed the new public one")
		}
		// Attempts created now offer the current endpoint.
		a := e.attempt(g, "client-1")
		if a.HostPresence != v.Presence || a.HostPresencePublic != otherPub(2) {
			t.Fatalf("attempt does not name the current host presence")
		}
	})

	t.Run("SequenceStrictlyIncreasing", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		e.presence(v, 5, pub(1))
		for _, seq := range []uint64{5, 4, 1} {
			e.unchanged("stale seq", func() {
				_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, seq, pub(2)))
				e.want("BindHostPresence with stale seq", r, err, engine.Conflict)
			})
		}
		e.presence(v, 7, pub(3))
		// The last accepted sequence survives presence expiry.
		e.c.Advance(e.l.PresenceTTL)
		e.wantGet(v.ID, true, engine.NotFound)
		e.unchanged("old datagram after expiry", func() {
			_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 7, pub(3)))
			e.want("replayed heartbeat after expiry", r, err, engine.Conflict)
		})
		e.wantGet(v.ID, true, engine.NotFound)
		e.presence(v, 8, pub(3))
		e.wantGet(v.ID, true, engine.Success)
		// Wrong key or unknown handle: NotFound, seq untouched.
		wrong := e.presenceCmd(v, 9, pub(3))
		wrong.Key = e.leaseKey(v.Lease)
		unknown := e.presenceCmd(v, 9, pub(3))
		unknown.Handle = engine.Handle{UUID: engine.NewUUID()}
		unknown.Key = e.presenceKey(unknown.Handle)
		e.unchanged("bad heartbeat", func() {
			_, r, err := e.s.BindHostPresence(e.ctx, wrong)
			e.want("BindHostPresence with the wrong key", r, err, engine.NotFound)
			_, r, err = e.s.BindHostPresence(e.ctx, unknown)
			e.want("BindHostPresence of an unknown handle", r, err, engine.NotFound)
		})
		e.presence(v, 9, pub(3))
		e.presence(v, engine.MaxPresenceSeq, pub(3)) // the highest accepted (see Input)
	})

	t.Run("PendingAttempts", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		var as []engine.AttemptView
		for i := 0; i < 6; i++ {
			as = append(as, e.attempt(v, engine.Subject("client-"+string(rune('a'+i)))))
			e.c.Advance(time.Millisecond)
		}
		wantPending := func(seq uint64, want ...engine.AttemptView) {
			t.Helper()
			pv := e.presence(v, seq, pub(40000))
			if pv.NPending != len(want) {
				t.Fatalf("presence names %d pending attempts, want %d", pv.NPending, len(want))
			}
			for i, a := range want {
				if pv.Pending[i] != a.Handle {
					t.Fatalf("pending[%d] is not the %d-th oldest unbound attempt", i, i)
				}
			}
		}
		wantPending(2, as[0], as[1], as[2], as[3])
		// Binding the host endpoint removes an attempt; a client bind does not.
		e.bind(e.bindCmd(as[0], engine.RoleHost, pub(1), netipZero))
		e.bind(e.bindCmd(as[2], engine.RoleClient, pub(2), netipZero))
		wantPending(3, as[1], as[2], as[3], as[4])
		e.bind(e.bindCmd(as[1], engine.RoleHost, pub(1), netipZero))
		e.bind(e.bindCmd(as[3], engine.RoleHost, pub(1), netipZero))
		wantPending(4, as[2], as[4], as[5])
		for _, a := range []engine.AttemptView{as[2], as[4], as[5]} {
			e.bind(e.bindCmd(a, engine.RoleHost, pub(1), netipZero))
		}
		wantPending(5)
		// Expired attempts drop out too.
		b := e.attempt(v, "client-x")
		wantPending(6, b)
		e.c.Advance(e.l.AttemptTTL)
		wantPending(7)
		// Another listing's attempts are not named.
		w := e.visible("publisher-2")
		e.attempt(w, "client-y")
		wantPending(8)
	})
}
