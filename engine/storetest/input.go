package storetest

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Field-name alternatives a store may use in InputError.Field.
var (
	fSubject = []string{"subject", "owner", "client"}
	fTenant  = []string{"game", "environment", "tenant"}
	fIdemKey = []string{"idempotency"}
	fPublic  = []string{"public", "endpoint", "addr"}
	fLocal   = []string{"local", "endpoint", "addr"}
	fTTL     = []string{"ttl", "lifetime"}
)

var badTenants = []engine.Tenant{
	{Game: "", Env: "test"}, {Game: "space-game", Env: ""}, {Game: "Space", Env: "test"},
	{Game: "space game", Env: "test"}, {Game: strings.Repeat("a", 65), Env: "test"}, {Game: "a", Env: "t/x"},
}

var badSubjects = []engine.Subject{"", engine.Subject(strings.Repeat("s", 257)), "a\x01b", "bad\xffutf8", "tab\there"}

var badKeys = []string{"", strings.Repeat("k", 129), "has space", "tab\tkey", "é"}

// badEndpoints are invalid public endpoints; the zero AddrPort among them.
var badEndpoints = []netip.AddrPort{{}, netip.AddrPortFrom(netip.MustParseAddr("203.0.113.10"), 0)}

// refusedListing requires CreateListing(cmd), with what is wrong in it, to
// be an *engine.InputError naming one of fields and to change nothing.
func (e *env) refusedListing(what string, cmd engine.CreateListing, fields ...string) {
	e.t.Helper()
	e.unchanged(what, func() {
		_, _, err := e.s.CreateListing(e.ctx, cmd)
		e.wantInput("CreateListing with "+what, err, fields...)
	})
}

// runInput checks that every invalid input gives an *engine.InputError
// naming the field and changes nothing.
func runInput(t *testing.T, f Factory) {
	t.Run("ListingSpec", func(t *testing.T) {
		e := newEnv(t, f)
		e.visible("publisher-1")
		cases := []struct {
			field string
			mod   func(*engine.ListingSpec)
		}{
			{"region", func(s *engine.ListingSpec) { s.Region = "" }},
			{"region", func(s *engine.ListingSpec) { s.Region = "EU" }},
			{"region", func(s *engine.ListingSpec) { s.Region = strings.Repeat("a", 33) }},
			{"protocol_version", func(s *engine.ListingSpec) { s.ProtocolVersion = 0 }},
			{"build_version", func(s *engine.ListingSpec) { s.BuildVersion = "" }},
			{"build_version", func(s *engine.ListingSpec) { s.BuildVersion = "1 2" }},
			{"build_version", func(s *engine.ListingSpec) { s.BuildVersion = strings.Repeat("1", 33) }},
			{"display_name", func(s *engine.ListingSpec) { s.DisplayName = "" }},
			{"display_name", func(s *engine.ListingSpec) { s.DisplayName = strings.Repeat("é", 65) }},
			{"display_name", func(s *engine.ListingSpec) { s.DisplayName = "a\u200bb" }},
			{"display_name", func(s *engine.ListingSpec) { s.DisplayName = "a\nb" }},
			{"display_name", func(s *engine.ListingSpec) { s.DisplayName = "\xff" }},
			{"visibility", func(s *engine.ListingSpec) { s.Visibility = 0 }},
			{"visibility", func(s *engine.ListingSpec) { s.Visibility = 3 }},
			{"trust_mode", func(s *engine.ListingSpec) { s.TrustMode = 0 }},
			{"trust_mode", func(s *engine.ListingSpec) { s.TrustMode = 9 }},
			{"max_players", func(s *engine.ListingSpec) { s.MaxPlayers = 1025 }},
			{"max_players", func(s *engine.ListingSpec) { s.MaxPlayers = -1 }},
			{"max_players", func(s *engine.ListingSpec) { s.MaxPlayers, s.CurrentPlayers = 0, 0 }}, // a session nobody can join
			{"current_players", func(s *engine.ListingSpec) { s.CurrentPlayers = 9 }},
			{"current_players", func(s *engine.ListingSpec) { s.CurrentPlayers = -1 }},
			{"metadata", func(s *engine.ListingSpec) {
				s.Metadata = nil
				for i := 0; i < 17; i++ {
					s.Metadata = append(s.Metadata, engine.MetaEntry{Key: string(rune('a' + i)), Value: "v"})
				}
			}},
			{"metadata", func(s *engine.ListingSpec) { s.Metadata = []engine.MetaEntry{{Key: "", Value: "v"}} }},
			{"metadata", func(s *engine.ListingSpec) { s.Metadata = []engine.MetaEntry{{Key: "Mode", Value: "v"}} }},
			{"metadata", func(s *engine.ListingSpec) { s.Metadata = []engine.MetaEntry{{Key: "b"}, {Key: "a"}} }},
			{"metadata", func(s *engine.ListingSpec) { s.Metadata = []engine.MetaEntry{{Key: "a"}, {Key: "a"}} }},
			{"metadata", func(s *engine.ListingSpec) {
				s.Metadata = []engine.MetaEntry{{Key: "a", Value: strings.Repeat("v", 257)}}
			}},
			{"metadata", func(s *engine.ListingSpec) { s.Metadata = []engine.MetaEntry{{Key: "a", Value: "x\x00"}} }},
		}
		for _, c := range cases {
			cmd := e.listingCmd("publisher-1")
			c.mod(&cmd.Spec)
			e.refusedListing("invalid "+c.field, cmd, c.field)
		}
	})

	t.Run("CreateListingEnvelope", func(t *testing.T) {
		e := newEnv(t, f)
		e.visible("publisher-1")
		for _, bt := range badTenants {
			cmd := e.listingCmd("publisher-1")
			cmd.Tenant = bt
			e.refusedListing("invalid tenant", cmd, fTenant...)
		}
		for _, bs := range badSubjects {
			cmd := e.listingCmd(bs)
			e.refusedListing("invalid owner", cmd, fSubject...)
		}
		for _, bk := range badKeys {
			cmd := e.listingCmd("publisher-1")
			cmd.IdempotencyKey = bk
			e.refusedListing("invalid idempotency key", cmd, fIdemKey...)
		}
		cmd := e.listingCmd("publisher-1")
		cmd.Doc = make([]byte, engine.MaxDoc+1)
		e.refusedListing("a doc over MaxDoc", cmd, "doc")
		cmd.Doc = cmd.Doc[:engine.MaxDoc]
		if _, r, err := e.s.CreateListing(e.ctx, cmd); err != nil || !r.OK() {
			t.Fatalf("CreateListing with a doc of exactly MaxDoc: %v %v", r.Outcome, err)
		}
	})

	t.Run("Renew", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		e.unchanged("invalid renew", func() {
			c := e.renewCmd(v)
			c.CurrentPlayers = 9
			_, _, err := e.s.RenewLease(e.ctx, c)
			e.wantInput("RenewLease above max_players", err, "current_players")
			c = e.renewCmd(v)
			c.CurrentPlayers = engine.MaxPlayers + 1
			_, _, err = e.s.RenewLease(e.ctx, c)
			e.wantInput("RenewLease above 1024 players", err, "current_players")
			c = e.renewCmd(v)
			c.Tenant = badTenants[0]
			_, _, err = e.s.RenewLease(e.ctx, c)
			e.wantInput("RenewLease with invalid tenant", err, fTenant...)
			c = e.renewCmd(v)
			c.Owner = badSubjects[0]
			_, _, err = e.s.RenewLease(e.ctx, c)
			e.wantInput("RenewLease with invalid owner", err, fSubject...)
			d := e.deleteCmd(v)
			d.Tenant = badTenants[2]
			_, err = e.s.DeleteListing(e.ctx, d)
			e.wantInput("DeleteListing with invalid tenant", err, fTenant...)
			d = e.deleteCmd(v)
			d.Owner = badSubjects[2]
			_, err = e.s.DeleteListing(e.ctx, d)
			e.wantInput("DeleteListing with invalid owner", err, fSubject...)
			_, _, err = e.s.GetListing(e.ctx, engine.GetListing{Tenant: badTenants[1], Listing: v.ID})
			e.wantInput("GetListing with invalid tenant", err, fTenant...)
		})
	})

	t.Run("Browse", func(t *testing.T) {
		e := newEnv(t, f)
		e.visible("publisher-1")
		good := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10}
		cases := []struct {
			fields []string
			mod    func(*engine.Browse)
		}{
			{[]string{"limit"}, func(b *engine.Browse) { b.Limit = 0 }},
			{[]string{"limit"}, func(b *engine.Browse) { b.Limit = -1 }},
			{[]string{"limit"}, func(b *engine.Browse) { b.Limit = engine.BrowsePageMax + 1 }},
			{[]string{"protocol"}, func(b *engine.Browse) { b.ProtocolVersion = 0 }},
			{[]string{"region"}, func(b *engine.Browse) { b.Region = "EU" }},
			{fTenant, func(b *engine.Browse) { b.Tenant = badTenants[3] }},
		}
		for _, c := range cases {
			q := good
			c.mod(&q)
			e.unchanged("invalid browse", func() {
				_, _, _, err := e.s.BrowseVisible(e.ctx, q, nil)
				e.wantInput("BrowseVisible", err, c.fields...)
			})
		}
	})

	t.Run("Presence", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		e.unchanged("invalid presence", func() {
			// Seq 0: docs/contracts/udp.md#presence-refresh says "0 is stale: 409" (Conflict);
			// an InputError naming the sequence is accepted too. Either way
			// nothing changes.
			c := e.presenceCmd(v, 0, pub(1))
			_, r, err := e.s.BindHostPresence(e.ctx, c)
			if err != nil || r.Outcome != engine.Conflict {
				e.wantInput("BindHostPresence with seq 0 (want Conflict or InputError)", err, "seq")
			}
			for _, bad := range badEndpoints {
				c = e.presenceCmd(v, 5, bad)
				_, _, err := e.s.BindHostPresence(e.ctx, c)
				e.wantInput("BindHostPresence with invalid public endpoint", err, fPublic...)
			}
			c = e.presenceCmd(v, 5, pub(1))
			c.Local = badEndpoints[1]
			_, _, err = e.s.BindHostPresence(e.ctx, c)
			e.wantInput("BindHostPresence with invalid local endpoint", err, fLocal...)
		})
		// None of those recorded seq 5.
		e.presence(v, 2, pub(1))
	})

	// A sequence above engine.MaxPresenceSeq is bad input, directly and in a
	// batch, and is never recorded: a buggy host (a negative number sent
	// unsigned, a random value) gets an error instead of locking itself out
	// of its own listing, whose sequence may only rise.
	t.Run("PresenceSequenceAboveBound", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		for _, seq := range []uint64{engine.MaxPresenceSeq + 1, 1 << 63, ^uint64(0)} {
			e.unchanged("sequence above the bound", func() {
				_, _, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, seq, pub(2)))
				e.wantInput("BindHostPresence with a sequence above the bound", err, "seq")
				ops := []engine.Op{{Kind: engine.OpPresence, Presence: e.presenceCmd(v, seq, pub(2))}}
				if err := e.s.ApplyBatch(e.ctx, ops); err != nil {
					t.Fatal(err)
				}
				e.wantInput("batched presence with a sequence above the bound", ops[0].Err, "seq")
			})
		}
		// The host carries on counting; the bound itself is the last value.
		e.presence(v, 2, pub(3))
		e.presence(v, engine.MaxPresenceSeq, pub(4))
	})

	t.Run("Attempt", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		e.unchanged("invalid attempt", func() {
			c := e.attemptCmd(v, "client-1")
			c.ProtocolVersion = 0
			_, _, err := e.s.CreateJoinAttempt(e.ctx, c)
			e.wantInput("CreateJoinAttempt with protocol 0", err, "protocol")
			for _, bt := range badTenants {
				c = e.attemptCmd(v, "client-1")
				c.Tenant = bt
				_, _, err = e.s.CreateJoinAttempt(e.ctx, c)
				e.wantInput("CreateJoinAttempt with invalid tenant", err, fTenant...)
			}
			for _, bs := range badSubjects {
				c = e.attemptCmd(v, bs)
				_, _, err = e.s.CreateJoinAttempt(e.ctx, c)
				e.wantInput("CreateJoinAttempt with invalid client", err, fSubject...)
			}
			for _, bk := range badKeys {
				c = e.attemptCmd(v, "client-1")
				c.IdempotencyKey = bk
				_, _, err = e.s.CreateJoinAttempt(e.ctx, c)
				e.wantInput("CreateJoinAttempt with invalid idempotency key", err, fIdemKey...)
			}
			for _, role := range []engine.Role{0, 3} {
				b := e.bindCmd(a, engine.RoleClient, pub(1), netipZero)
				b.Role = role
				_, _, err = e.s.BindAttemptEndpoint(e.ctx, b)
				e.wantInput("BindAttemptEndpoint with invalid role", err, "role")
			}
			for _, bad := range badEndpoints {
				_, _, err = e.s.BindAttemptEndpoint(e.ctx, e.bindCmd(a, engine.RoleClient, bad, netipZero))
				e.wantInput("BindAttemptEndpoint with invalid public endpoint", err, fPublic...)
			}
			_, _, err = e.s.BindAttemptEndpoint(e.ctx, e.bindCmd(a, engine.RoleHost, pub(1), badEndpoints[1]))
			e.wantInput("BindAttemptEndpoint with invalid local endpoint", err, fLocal...)
		})
	})

	t.Run("ReplayAndRevocation", func(t *testing.T) {
		e := newEnv(t, f)
		e.visible("publisher-1")
		e.unchanged("invalid replay/revocation", func() {
			cases := []struct {
				fields []string
				c      engine.ConsumeReplay
			}{
				{[]string{"namespace"}, engine.ConsumeReplay{Namespace: "", Key: "k"}},
				{[]string{"namespace"}, engine.ConsumeReplay{Namespace: strings.Repeat("n", 65), Key: "k"}},
				{[]string{"key"}, engine.ConsumeReplay{Namespace: "n", Key: ""}},
				{[]string{"key"}, engine.ConsumeReplay{Namespace: "n", Key: strings.Repeat("k", 129)}},
				{fTTL, engine.ConsumeReplay{Namespace: "n", Key: "k", Lifetime: e.l.ReplayTTL + time.Nanosecond}},
				{fTTL, engine.ConsumeReplay{Namespace: "n", Key: "k", Lifetime: -time.Second}},
			}
			for _, c := range cases {
				_, err := e.s.ConsumeReplay(e.ctx, c.c)
				e.wantInput("ConsumeReplay", err, c.fields...)
			}
			for _, ttl := range []time.Duration{0, -time.Second, time.Second - time.Nanosecond, engine.MaxRevocationTTL + time.Nanosecond} {
				_, _, err := e.s.RevokePrincipal(e.ctx, "publisher-1", ttl)
				e.wantInput("RevokePrincipal with ttl out of range", err, fTTL...)
			}
			for _, bs := range badSubjects {
				_, _, err := e.s.RevokePrincipal(e.ctx, bs, time.Minute)
				e.wantInput("RevokePrincipal with invalid subject", err, fSubject...)
				_, err = e.s.Revoked(e.ctx, bs)
				e.wantInput("Revoked with invalid subject", err, fSubject...)
			}
			_, err := e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: badTenants[0], Listing: engine.ListingID{UUID: engine.NewUUID()}})
			e.wantInput("RevokeListing with invalid tenant", err, fTenant...)
		})
		// The boundaries themselves are valid.
		for _, ttl := range []time.Duration{time.Second, engine.MaxRevocationTTL} {
			_, r, err := e.s.RevokePrincipal(e.ctx, "edge", ttl)
			e.want("RevokePrincipal at a ttl boundary", r, err, engine.Success)
		}
		r, err := e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: strings.Repeat("n", 64), Key: strings.Repeat("k", 128), Lifetime: e.l.ReplayTTL})
		e.want("ConsumeReplay at the boundaries", r, err, engine.Success)
	})
}
