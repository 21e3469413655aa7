package storetest

import (
	"bytes"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runLease covers creation views, renewal (CAS, owner scoping, player count)
// and deletion (owner scoping, cascade).
func runLease(t *testing.T, f Factory) {
	t.Run("CreatedView", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		v := e.create(cmd)
		if v.ID.IsZero() || v.Lease.IsZero() || v.Presence.IsZero() {
			t.Fatalf("created listing has a zero ID, lease or presence handle")
		}
		if v.ID.UUID == v.Lease.UUID || v.ID.UUID == v.Presence.UUID || v.Lease.UUID == v.Presence.UUID {
			t.Fatalf("created listing reuses one UUID for two roles")
		}
		if v.Tenant != tenant || v.Owner != "publisher-1" || v.Version != 1 || v.CurrentPlayers != 1 {
			t.Fatalf("created view: tenant %v owner %q version %d players %d", v.Tenant, v.Owner, v.Version, v.CurrentPlayers)
		}
		if v.Spec == nil || v.Spec.Hash() != cmd.Spec.Hash() || !bytes.Equal(v.Doc, cmd.Doc) {
			t.Fatalf("created view does not carry the spec and doc")
		}
		// The store keeps its own copy: the caller reusing its buffers
		// afterwards changes nothing stored.
		docCopy, metaCopy := string(cmd.Doc), cmd.Spec.Metadata[0].Value
		cmd.Doc[0] = 'X'
		cmd.Spec.Metadata[0].Value = "mutated"
		if g := e.wantGet(v.ID, false, engine.Success); string(g.Doc) != docCopy || g.Spec.Metadata[0].Value != metaCopy {
			t.Fatalf("the store aliases the caller's Doc or Metadata")
		}
		cmd.Doc[0] = docCopy[0]
		cmd.Spec.Metadata[0].Value = metaCopy
		if v.PresenceFresh || v.HostPublic.IsValid() {
			t.Fatalf("a new listing reports fresh presence before any heartbeat")
		}
		// A second registration gets distinct IDs.
		w := e.create(e.listingCmd("publisher-1"))
		if w.ID == v.ID || w.Lease == v.Lease || w.Presence == v.Presence {
			t.Fatalf("two registrations share an ID")
		}
		g := e.wantGet(v.ID, false, engine.Success)
		if g.ID != v.ID || g.Lease != v.Lease || g.Presence != v.Presence || g.Version != 1 || g.Spec.Hash() != cmd.Spec.Hash() {
			t.Fatalf("GetListing view differs from the created view")
		}
		// Unlisted listings are found by ID (joinable once fresh).
		uc := e.listingCmd("publisher-1")
		uc.Spec.Visibility = engine.Unlisted
		u := e.create(uc)
		e.presence(u, 1, pub(9))
		e.wantGet(u.ID, true, engine.Success)
		// Another tenant never sees it.
		_, r, err := e.s.GetListing(e.ctx, engine.GetListing{Tenant: otherTenant, Listing: v.ID})
		e.want("GetListing from another tenant", r, err, engine.NotFound)
		_, r, err = e.s.GetListing(e.ctx, engine.GetListing{Tenant: tenant, Listing: engine.ListingID{UUID: engine.NewUUID()}})
		e.want("GetListing of an unknown ID", r, err, engine.NotFound)
	})

	t.Run("RenewSemantics", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		good := e.renewCmd(v)
		bad := []struct {
			name string
			mod  func(*engine.RenewLease)
		}{
			{"other owner", func(c *engine.RenewLease) { c.Owner = "publisher-2" }},
			{"other tenant", func(c *engine.RenewLease) { c.Tenant = otherTenant }},
			{"other lease ID", func(c *engine.RenewLease) { c.Lease = engine.LeaseID{UUID: engine.NewUUID()} }},
			{"wrong key", func(c *engine.RenewLease) { c.LeaseKey = e.presenceKey(v.Presence) }},
			{"unknown listing", func(c *engine.RenewLease) { c.Listing = engine.ListingID{UUID: engine.NewUUID()} }},
		}
		for _, b := range bad {
			c := good
			b.mod(&c)
			e.unchanged("renew with "+b.name, func() {
				_, r, err := e.s.RenewLease(e.ctx, c)
				e.want("RenewLease with "+b.name, r, err, engine.NotFound)
			})
		}
		c := good
		c.CurrentPlayers = 5
		rv, r, err := e.s.RenewLease(e.ctx, c)
		e.want("RenewLease", r, err, engine.Success)
		if rv.Version != 2 || rv.CurrentPlayers != 5 || rv.ID != v.ID {
			t.Fatalf("renewed: version %d players %d", rv.Version, rv.CurrentPlayers)
		}
		c.ExpectedVersion, c.CurrentPlayers = 2, -1
		rv, r, err = e.s.RenewLease(e.ctx, c)
		e.want("RenewLease keeping players", r, err, engine.Success)
		if rv.Version != 3 || rv.CurrentPlayers != 5 {
			t.Fatalf("renew with CurrentPlayers -1: version %d players %d, want 3 and 5", rv.Version, rv.CurrentPlayers)
		}
		if g := e.wantGet(v.ID, false, engine.Success); g.CurrentPlayers != 5 || g.Version != 3 || g.Spec.CurrentPlayers != 1 {
			t.Fatalf("GetListing after renew: players %d version %d spec players %d", g.CurrentPlayers, g.Version, g.Spec.CurrentPlayers)
		}
		// Stale versions, older and newer, conflict and report the current one.
		for _, ver := range []uint64{1, 2, 4, 0} {
			c.ExpectedVersion = ver
			e.unchanged("stale renew", func() {
				cv, r, err := e.s.RenewLease(e.ctx, c)
				e.want("stale RenewLease", r, err, engine.Conflict)
				if cv.Version != 3 {
					t.Fatalf("stale renew reports version %d, want 3", cv.Version)
				}
			})
		}
		// Above max_players is invalid input.
		c.ExpectedVersion, c.CurrentPlayers = 3, 9
		e.unchanged("renew above max", func() {
			_, _, err := e.s.RenewLease(e.ctx, c)
			e.wantInput("RenewLease above max_players", err, "current_players")
		})
	})

	t.Run("DeleteSemantics", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		other := e.visible("publisher-2")
		oa := e.attempt(other, "client-1")
		good := e.deleteCmd(v)
		bad := []struct {
			name string
			mod  func(*engine.DeleteListing)
		}{
			{"other owner", func(c *engine.DeleteListing) { c.Owner = "publisher-2" }},
			{"other tenant", func(c *engine.DeleteListing) { c.Tenant = otherTenant }},
			{"other lease ID", func(c *engine.DeleteListing) { c.Lease = other.Lease }},
			{"other lease key", func(c *engine.DeleteListing) { c.LeaseKey = e.leaseKey(other.Lease) }},
			{"unknown listing", func(c *engine.DeleteListing) { c.Listing = engine.ListingID{UUID: engine.NewUUID()} }},
		}
		for _, b := range bad {
			c := good
			b.mod(&c)
			e.unchanged("delete with "+b.name, func() {
				r, err := e.s.DeleteListing(e.ctx, c)
				e.want("DeleteListing with "+b.name, r, err, engine.NotFound)
			})
		}
		r, err := e.s.DeleteListing(e.ctx, good)
		e.want("DeleteListing", r, err, engine.Success)
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantAttempt(a.Handle, false, "delete left the listing's attempt")
		e.wantAttempt(oa.Handle, true, "delete removed another listing's attempt")
		_, r, err = e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 2, pub(1)))
		e.want("presence of a deleted listing", r, err, engine.NotFound)
		e.wantUsed(engine.PoolListings, 1)
		e.wantUsed(engine.PoolPresence, 1)
		e.wantUsed(engine.PoolAttempts, 1)
		e.unchanged("second delete", func() {
			r, err = e.s.DeleteListing(e.ctx, good)
			e.want("DeleteListing again", r, err, engine.NotFound)
			_, r, err = e.s.RenewLease(e.ctx, e.renewCmd(v))
			e.want("RenewLease of a deleted listing", r, err, engine.NotFound)
		})
	})
}
