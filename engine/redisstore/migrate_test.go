package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// olderLayout rewrites listing ARGV[1]'s presence record as the library
// before records written as sent kept it: field the listing ID as text;
// value the sequence in 16 digits, the key fingerprint, the pending flag,
// the instance the last refresh reached (ARGV[3], zeros for none) and,
// when ARGV[4] is not empty, the deadline in 20 digits and the endpoints as
// text (ARGV[4]). ARGV[2] is the sequence.
const olderLayout = `
local p, id = KEYS[1], ARGV[1]
local field = redis.call('HGET', p .. 'l:' .. id, 'prf')
redis.call('HDEL', p .. 'pr', field)
redis.call('HDEL', p .. 'l:' .. id, 'prf', 'pi')
local rec = string.format('%016d', tonumber(ARGV[2])) .. string.sub(field, 17, 32) .. '0' .. ARGV[3]
if ARGV[4] ~= '' then rec = rec .. string.format('%020d', 10^15) .. ARGV[4] end
redis.call('HSET', p .. 'pr', id, rec)
redis.call('HDEL', p .. 'meta', 'model')
return 1`

// TestPresenceRecordsOfTheOlderLayoutAreConverted: a store started on a
// deployment whose presence records an older library wrote converts them
// before it serves. Each listing keeps its last accepted sequence (an old
// datagram stays stale) and the instance its presence last reached; a
// presence that was fresh becomes idle (its deadline and text endpoints
// are not carried over), leaves the presence pool and the browse index,
// and is fresh again at the host's next refresh. Enough listings that the
// conversion takes several calls.
func TestPresenceRecordsOfTheOlderLayoutAreConverted(t *testing.T) {
	ctx := context.Background()
	clock := engine.NewManualClock()
	l := engine.DefaultLimits()
	old, k, idle := newOneListingStore(t, l, clock)
	// More than a hash keeps as a listpack (512), which HSCAN answers in
	// one piece, and more than one call's 256.
	cmds := make([]engine.CreateListing, 700)
	for i := range cmds {
		cmds[i] = engine.CreateListing{Tenant: idle.Tenant, Owner: engine.Subject("o" + strconv.Itoa(i)), IdempotencyKey: "k", Spec: *idle.Spec}
	}
	views, err := old.CreateListingsPipelined(ctx, cmds)
	if err != nil {
		t.Fatal(err)
	}
	fresh, many := views[0], views[1:]
	refresh := func(s *redisstore.Store, v engine.ListingView, seq uint64) engine.Outcome {
		t.Helper()
		pc := k.Presence(v.Presence)
		r, err := refreshPresence(ctx, s, engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}, true)
		if err != nil {
			t.Fatal(err)
		}
		return r.Outcome
	}
	if o := refresh(old, fresh, 5); o != engine.Success {
		t.Fatalf("refresh: %v", o)
	}
	const noInstance = "000000000000000000000000000000000000"
	if err := old.RunScript(ctx, olderLayout, idle.ID.String(), "0", noInstance, ""); err != nil {
		t.Fatal(err)
	}
	if err := old.RunScript(ctx, olderLayout, fresh.ID.String(), "5", old.InstanceID().String(), "203.0.113.10:4000|"); err != nil {
		t.Fatal(err)
	}
	for _, v := range many {
		if err := old.RunScript(ctx, olderLayout, v.ID.String(), "0", noInstance, ""); err != nil {
			t.Fatal(err)
		}
	}

	s, err := redisstore.New(ctx, redisstore.Config{Client: redisClient(t), Name: old.DeploymentName(), Limits: l, Keyring: k, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Pools[engine.PoolPresence-1].Used != 0 {
		t.Fatalf("presence pool %d after the conversion, want 0", st.Pools[engine.PoolPresence-1].Used)
	}
	v, r, err := s.GetListing(ctx, engine.GetListing{Tenant: fresh.Tenant, Listing: fresh.ID})
	if err != nil || !r.OK() || v.PresenceFresh || v.PresenceInstance != old.InstanceID() {
		t.Fatalf("converted listing: fresh %v, instance %v, want idle and %v (%v %v)", v.PresenceFresh, v.PresenceInstance, old.InstanceID(), r.Outcome, err)
	}
	if inst, err := s.PresenceInstance(ctx, fresh.ID); err != nil || inst != old.InstanceID() {
		t.Fatalf("presence instance of the converted listing: %v (%v), want %v", inst, err, old.InstanceID())
	}
	if o := refresh(s, fresh, 5); o != engine.Conflict {
		t.Fatalf("a refresh at the last accepted sequence after the conversion: %v, want Conflict", o)
	}
	if o := refresh(s, fresh, 6); o != engine.Success {
		t.Fatalf("the next refresh after the conversion: %v", o)
	}
	if inst, err := s.PresenceInstance(ctx, fresh.ID); err != nil || inst != s.InstanceID() {
		t.Fatalf("presence instance after the refresh: %v (%v), want %v", inst, err, s.InstanceID())
	}
	for _, v := range []engine.ListingView{idle, many[len(many)-1]} {
		if o := refresh(s, v, 1); o != engine.Success {
			t.Fatalf("the first refresh of a converted listing that never had one: %v", o)
		}
	}
	if _, r, err := s.GetListing(ctx, engine.GetListing{Tenant: fresh.Tenant, Listing: fresh.ID, Joinable: true}); err != nil || !r.OK() {
		t.Fatalf("refreshed converted listing not joinable: %v %v", r.Outcome, err)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
