package storetest

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runAttributes: attributes set at creation (part of the fingerprint),
// shown by views, GetListing and browse, kept by a renewal without
// SetAttributes, replaced or cleared by one with it, and seen by filters;
// a stale version or bad attributes change nothing.
func runAttributes(t *testing.T, f Factory) {
	e := newEnv(t, f)
	c := e.listingCmd("apub")
	c.Spec.Attributes = engine.Attributes{{Name: "level", Num: 12, IsNum: true}, {Name: "mode", Str: "coop"}}
	v := e.create(c)
	want := engine.Attributes{{Name: "level", Num: 12, IsNum: true}, {Name: "mode", Str: "coop"}}
	c.Spec.Attributes[1].Str = "pvp" // the caller's slice is not the listing's
	if !v.Attributes.Equal(want) {
		t.Fatalf("created view attributes %v, want %v", v.Attributes, want)
	}
	v2, r, err := e.s.CreateListing(e.ctx, c)
	e.want("CreateListing with other attributes, same key", r, err, engine.Conflict)
	c.Spec.Attributes[1].Str = "coop"
	v2, r, err = e.s.CreateListing(e.ctx, c)
	e.want("CreateListing replay", r, err, engine.Success)
	if !r.Replay || v2.ID != v.ID || !v2.Attributes.Equal(want) {
		t.Fatalf("replay: replay %v, same %v, attributes %v", r.Replay, v2.ID == v.ID, v2.Attributes)
	}
	e.presence(v, 1, pub(40000))
	wantAttrs := func(what string, want engine.Attributes) {
		t.Helper()
		g := e.wantGet(v.ID, true, engine.Success)
		if !g.Attributes.Equal(want) {
			t.Fatalf("%s: GetListing attributes %v, want %v", what, g.Attributes, want)
		}
		items, _ := e.page(engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10})
		if len(items) != 1 || !items[0].Attributes.Equal(want) {
			t.Fatalf("%s: browse item attributes %v, want %v", what, items, want)
		}
		for _, mode := range []string{"coop", "pvp"} {
			q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10,
				Filter: engine.BrowseFilter{Strings: []engine.StringFilter{{Name: "mode", Values: []string{mode}}}}}
			items, _ := e.page(q)
			a, ok := want.Get("mode")
			if match := ok && a.Str == mode; (len(items) == 1) != match {
				t.Fatalf("%s: filter mode=%s found %d listings", what, mode, len(items))
			}
		}
	}
	wantAttrs("created", want)

	cmd := e.renewCmd(g(e, v))
	cmd.CurrentPlayers = 2
	v3, r, err := e.s.RenewLease(e.ctx, cmd)
	e.want("RenewLease without SetAttributes", r, err, engine.Success)
	if !v3.Attributes.Equal(want) {
		t.Fatalf("a renewal without SetAttributes changed the attributes to %v", v3.Attributes)
	}
	wantAttrs("renewed", want)

	cmd = e.renewCmd(v3)
	cmd.SetAttributes, cmd.Attributes = true, engine.Attributes{{Name: "map", Str: "x"}, {Name: "mode", Str: "pvp"}}
	stale := cmd
	stale.ExpectedVersion--
	e.unchanged("RenewLease with attributes on a stale version", func() {
		_, r, err := e.s.RenewLease(e.ctx, stale)
		e.want("RenewLease stale", r, err, engine.Conflict)
	})
	for name, bad := range map[string]engine.Attributes{
		"unsorted":    {{Name: "mode", Str: "pvp"}, {Name: "map", Str: "x"}},
		"duplicate":   {{Name: "mode", Str: "pvp"}, {Name: "mode", Str: "coop"}},
		"bad name":    {{Name: "Mode", Str: "pvp"}},
		"empty value": {{Name: "mode"}},
		"separator":   {{Name: "mode", Str: "a|b"}},
		"too long":    {{Name: "mode", Str: "0123456789012345678901234567890123"}},
		"big number":  {{Name: "level", Num: engine.MaxAttributeNumber + 1, IsNum: true}},
		"too many": {{Name: "a", Str: "1"}, {Name: "b", Str: "1"}, {Name: "c", Str: "1"}, {Name: "d", Str: "1"},
			{Name: "e", Str: "1"}, {Name: "f", Str: "1"}, {Name: "g", Str: "1"}, {Name: "h", Str: "1"}, {Name: "i", Str: "1"}},
	} {
		badCmd := cmd
		badCmd.Attributes = bad
		e.unchanged("RenewLease with "+name+" attributes", func() {
			_, _, err := e.s.RenewLease(e.ctx, badCmd)
			e.wantInput("RenewLease with "+name+" attributes", err, "attributes")
		})
		lc := e.listingCmd("apub")
		lc.Spec.Attributes = bad
		e.unchanged("CreateListing with "+name+" attributes", func() {
			_, _, err := e.s.CreateListing(e.ctx, lc)
			e.wantInput("CreateListing with "+name+" attributes", err, "attributes")
		})
	}
	v4, r, err := e.s.RenewLease(e.ctx, cmd)
	e.want("RenewLease with SetAttributes", r, err, engine.Success)
	if !v4.Attributes.Equal(cmd.Attributes) {
		t.Fatalf("renewed view attributes %v, want %v", v4.Attributes, cmd.Attributes)
	}
	wantAttrs("replaced", cmd.Attributes)

	cmd = e.renewCmd(v4)
	cmd.SetAttributes = true
	v5, r, err := e.s.RenewLease(e.ctx, cmd)
	e.want("RenewLease clearing the attributes", r, err, engine.Success)
	if len(v5.Attributes) != 0 {
		t.Fatalf("cleared attributes are %v", v5.Attributes)
	}
	wantAttrs("cleared", nil)
}

// g is v as GetListing sees it now (its current version).
func g(e *env, v engine.ListingView) engine.ListingView {
	e.t.Helper()
	return e.wantGet(v.ID, false, engine.Success)
}

// runFull: a join to a listing whose host reports it full is refused with
// Full, after NotFound (protocol, presence) and before the pools, and
// changes nothing; once a slot frees, the join succeeds.
func runFull(t *testing.T, f Factory) {
	e := newEnv(t, f, func(l *engine.Limits) { l.MaxAttempts = 1; l.TenantAttemptQuota = 1; l.SubjectAttemptQuota = 1 })
	c := e.listingCmd("fpub")
	c.Spec.MaxPlayers, c.Spec.CurrentPlayers = 2, 2
	full := e.create(c)
	e.unchanged("CreateJoinAttempt to a full listing without presence", func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(full, "fclient"))
		e.want("CreateJoinAttempt without presence", r, err, engine.NotFound)
	})
	e.presence(full, 1, pub(40000))
	e.unchanged("CreateJoinAttempt to a full listing", func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(full, "fclient"))
		e.want("CreateJoinAttempt full", r, err, engine.Full)
	})
	wrong := e.attemptCmd(full, "fclient")
	wrong.ProtocolVersion = 8
	e.unchanged("CreateJoinAttempt of another protocol to a full listing", func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, wrong)
		e.want("CreateJoinAttempt protocol", r, err, engine.NotFound)
	})
	// Fill the attempts pool: Full still comes first.
	e.attempt(e.visible("fpub2"), "fother")
	e.unchanged("CreateJoinAttempt to a full listing, pool full", func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(full, "fclient"))
		e.want("CreateJoinAttempt full before capacity", r, err, engine.Full)
	})
	// A renewal that frees a slot makes it joinable (the pool decides now).
	cmd := e.renewCmd(g(e, full))
	cmd.CurrentPlayers = 1
	_, r, err := e.s.RenewLease(e.ctx, cmd)
	e.want("RenewLease", r, err, engine.Success)
	_, r, err = e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(full, "fclient"))
	e.wantShed("CreateJoinAttempt with a free slot", r, err, engine.PoolAttempts)
}
