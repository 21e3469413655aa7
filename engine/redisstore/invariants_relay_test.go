package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestCheckInvariantsDetectsRelayCorruption: CheckInvariants must notice
// corruption of an attempt's relay fields and of the tombstones, written
// behind the store's back.
func TestCheckInvariantsDetectsRelayCorruption(t *testing.T) {
	ctx := context.Background()
	c := redisClient(t)
	for _, tc := range []struct {
		name    string
		corrupt func(p, live, ended string) rueidis.Commands
	}{
		{"relayed address on an unbound side", func(p, live, _ string) rueidis.Commands {
			return rueidis.Commands{c.B().Hset().Key(p+"a:"+live).FieldValue().FieldValue("crel", "192.0.2.50:5000").Build()}
		}},
		{"relay introduction without addresses", func(p, live, _ string) rueidis.Commands {
			return rueidis.Commands{c.B().Hset().Key(p+"a:"+live).FieldValue().FieldValue("relayed", "1").Build()}
		}},
		{"malformed outcome", func(p, live, _ string) rueidis.Commands {
			return rueidis.Commands{c.B().Hset().Key(p+"a:"+live).FieldValue().FieldValue("cout", "9:1").Build()}
		}},
		{"tombstone unscheduled", func(p, _, ended string) rueidis.Commands {
			return rueidis.Commands{c.B().Zrem().Key(p + "xexp").Member(ended).Build()}
		}},
		{"tombstone end", func(p, _, ended string) rueidis.Commands {
			return rueidis.Commands{c.B().Hset().Key(p+"x:"+ended).FieldValue().FieldValue("end", "0").Build()}
		}},
		{"tombstone of a live attempt", func(p, live, ended string) rueidis.Commands { // a copy of ended's, scheduled
			return rueidis.Commands{
				c.B().Copy().Source(p + "x:" + ended).Destination(p + "x:" + live).Build(),
				c.B().Zadd().Key(p+"xexp").ScoreMember().ScoreMember(1e15, live).Build(),
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock, name, k := engine.NewManualClock(), freshName(), engine.RandomKeyring()
			l := engine.DefaultLimits()
			s, err := redisstore.New(ctx, redisstore.Config{Client: c, Name: name, Limits: l, Keyring: k, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			views, err := s.CreateListingsPipelined(ctx, []engine.CreateListing{{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "o",
				IdempotencyKey: "k", Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
					Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}})
			if err != nil {
				t.Fatal(err)
			}
			v := views[0]
			pc := k.Presence(v.Presence)
			join := func(seq uint64, key string) engine.AttemptView {
				t.Helper()
				if _, r, err := s.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}); err != nil || !r.OK() {
					t.Fatalf("presence: %v %v", r.Outcome, err)
				}
				a, r, err := s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: v.Tenant, Client: "c", IdempotencyKey: key, Listing: v.ID, ProtocolVersion: 1})
				if err != nil || !r.OK() {
					t.Fatalf("join: %v %v", r.Outcome, err)
				}
				return a
			}
			ended := join(1, "j1")
			clock.Advance(l.AttemptTTL) // ended leaves a tombstone
			live := join(2, "j2")
			if err := s.CheckInvariants(); err != nil {
				t.Fatalf("fixture broken: %v", err)
			}
			p := "rdv:{" + name + "}:"
			for _, res := range c.DoMulti(ctx, tc.corrupt(p, live.ID.String(), ended.ID.String())...) {
				if err := res.Error(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CheckInvariants(); err == nil {
				t.Fatalf("%s: not detected", tc.name)
			}
		})
	}
}
