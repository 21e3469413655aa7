package redisstore_test

// The presence record a refresh writes, through ApplyBatch and
// BindHostPresence alike: the call reference it names, the endpoints it
// keeps, the deadline it moves, the listing a batch names once it knows
// it.

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestACallReferenceAnotherCallHoldsIsNotReused: the records a call
// accepts name its reference, whose entry gives their deadline and
// instance. When another live call already holds the reference the store
// drew (another instance with the same random prefix), the script writes
// nothing and the store sends the call again under a new prefix: the other
// call's entry stays as it was, and the refresh is accepted under a
// reference of its own. Batched and single refreshes alike.
func TestACallReferenceAnotherCallHoldsIsNotReused(t *testing.T) {
	for _, batched := range []bool{true, false} {
		ctx := context.Background()
		clock := engine.NewManualClock()
		s, k, v := newOneListingStore(t, engine.DefaultLimits(), clock)
		pc := k.Presence(v.Presence)
		taken := s.NextCallRef()
		const other = "another-instance"
		if err := s.TakeCallRef(ctx, taken, other, int64(engine.DefaultLimits().PresenceTTL)); err != nil {
			t.Fatal(err)
		}
		cmd := engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: 7, Public: netipAP("203.0.113.10:4000")}
		if r, err := refreshPresence(ctx, s, cmd, batched); err != nil || !r.OK() {
			t.Fatalf("batched %v: refresh under a taken reference: %v %v", batched, r.Outcome, err)
		}
		if inst, ok := s.CallEntry(ctx, taken); !ok || inst != other {
			t.Fatalf("batched %v: the other call's entry is now %q (%v)", batched, inst, ok)
		}
		rec := s.PresenceRecordOf(ctx, v.ID)
		if strings.Contains(rec, fmt.Sprintf("call=%x ", taken)) || !strings.HasPrefix(rec, "seq=7 pending=false call=") {
			t.Fatalf("batched %v: record %s, want a fresh record naming another call than %x", batched, rec, taken)
		}
		lv, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID})
		if err != nil || !r.OK() || lv.PresenceInstance != s.InstanceID() {
			t.Fatalf("batched %v: view names instance %v, want %v (%v %v)", batched, lv.PresenceInstance, s.InstanceID(), r.Outcome, err)
		}
		if err := s.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPresenceEndpointsComeBackAsSent: the endpoints a refresh records
// come back in the listing's and the attempt's views as the memory store
// keeps them (IPv6 and IPv4-mapped ones as sent, a zone dropped), and the
// record a snapshot shows carries no fingerprint.
func TestPresenceEndpointsComeBackAsSent(t *testing.T) {
	ctx := context.Background()
	clock := engine.NewManualClock()
	s, k, v := newOneListingStore(t, engine.DefaultLimits(), clock)
	pc := k.Presence(v.Presence)
	fp := engine.FingerprintOf(&pc)
	pub, loc := netip.MustParseAddrPort("[2001:db8::7]:40000"), netip.MustParseAddrPort("[::ffff:192.168.1.20]:40001")
	ops := []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: fp, Seq: 1, Public: pub, Local: loc}}}
	if err := s.ApplyBatch(ctx, ops); err != nil || !ops[0].Result.OK() {
		t.Fatalf("refresh: %v %v", ops[0].Result.Outcome, err)
	}
	lv, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID})
	if err != nil || !r.OK() || !lv.PresenceFresh || lv.HostPublic != pub || lv.HostLocal != loc {
		t.Fatalf("view: fresh %v public %v local %v, want %v %v (%v %v)", lv.PresenceFresh, lv.HostPublic, lv.HostLocal, pub, loc, r.Outcome, err)
	}
	av, r, err := s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: v.Tenant, Client: "c", IdempotencyKey: "j", Listing: v.ID, ProtocolVersion: 1})
	if err != nil || !r.OK() || av.HostPresencePublic != pub {
		t.Fatalf("attempt: host presence public %v, want %v (%v %v)", av.HostPresencePublic, pub, r.Outcome, err)
	}
	snap := s.Snapshot()
	for _, leak := range []string{string(fp[:]), fmt.Sprintf("%q", fp[:]), fmt.Sprintf("%x", fp[:])} {
		if strings.Contains(snap, strings.Trim(leak, `"`)) {
			t.Fatal("the snapshot shows the presence key's fingerprint")
		}
	}
	if !strings.Contains(snap, fmt.Sprintf("%q=\"seq=1 pending=true call=", v.ID.String())) {
		t.Fatalf("the snapshot does not show the presence record by its listing:\n%s", snap)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestRefreshedPresenceLivesToItsLatestDeadline: a refresh of a fresh
// presence moves the record's deadline only, and its entry in the deadline
// set comes due at the earlier deadline first. Cleanup must then move the
// entry, not end the presence: it ends exactly one PresenceTTL after the
// last refresh, through ApplyBatch and BindHostPresence alike.
func TestRefreshedPresenceLivesToItsLatestDeadline(t *testing.T) {
	for _, batched := range []bool{true, false} {
		ctx := context.Background()
		clock := engine.NewManualClock()
		l := engine.DefaultLimits()
		s, k, v := newOneListingStore(t, l, clock)
		pc := k.Presence(v.Presence)
		refresh := func(seq uint64) {
			t.Helper()
			cmd := engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}
			if r, err := refreshPresence(ctx, s, cmd, batched); err != nil || !r.OK() {
				t.Fatalf("refresh %d (batched %v): %v %v", seq, batched, r.Outcome, err)
			}
		}
		fresh := func() bool {
			t.Helper()
			_, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID, Joinable: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			return r.OK()
		}
		refresh(1)
		clock.Advance(l.PresenceTTL / 2)
		refresh(2)
		clock.Advance(l.PresenceTTL / 2) // the first deadline
		if !fresh() {
			t.Fatalf("batched %v: presence ended at its first deadline, refreshed since", batched)
		}
		clock.Advance(l.PresenceTTL/2 - time.Nanosecond)
		if !fresh() {
			t.Fatalf("batched %v: presence ended before its latest deadline", batched)
		}
		if st := s.Stats(); st.Pools[engine.PoolPresence-1].Used != 1 {
			t.Fatalf("batched %v: presence pool %d, want 1", batched, st.Pools[engine.PoolPresence-1].Used)
		}
		clock.Advance(time.Nanosecond)
		if fresh() {
			t.Fatalf("batched %v: presence outlived its latest deadline", batched)
		}
		if st := s.Stats(); st.Pools[engine.PoolPresence-1].Used != 0 {
			t.Fatalf("batched %v: presence pool %d after expiry, want 0", batched, st.Pools[engine.PoolPresence-1].Used)
		}
	}
}

// refreshPresence commits one presence refresh through ApplyBatch when
// batched, else through BindHostPresence.
func refreshPresence(ctx context.Context, s *redisstore.Store, cmd engine.BindPresence, batched bool) (engine.Result, error) {
	if !batched {
		_, r, err := s.BindHostPresence(ctx, cmd)
		return r, err
	}
	ops := []engine.Op{{Kind: engine.OpPresence, Presence: cmd}}
	err := s.ApplyBatch(ctx, ops)
	return ops[0].Result, err
}

// TestBatchedRefreshOfDeletedListingIsNotFound: after an accepted refresh
// the store names the listing in later batches (skipping the handle
// lookup); once the listing is deleted, a refresh is NotFound, a wrong key
// is NotFound, and neither changes anything.
func TestBatchedRefreshOfDeletedListingIsNotFound(t *testing.T) {
	ctx := context.Background()
	s, k, v := newOneListingStore(t, engine.DefaultLimits(), nil)
	pc := k.Presence(v.Presence)
	refresh := func(seq uint64, key engine.Fingerprint) engine.Outcome {
		t.Helper()
		ops := []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: key, Seq: seq,
			Public: netipAP("203.0.113.10:4000")}}}
		if err := s.ApplyBatch(ctx, ops); err != nil {
			t.Fatal(err)
		}
		return ops[0].Result.Outcome
	}
	for seq := uint64(1); seq <= 2; seq++ { // the second names the listing
		if o := refresh(seq, engine.FingerprintOf(&pc)); o != engine.Success {
			t.Fatalf("refresh %d: %v", seq, o)
		}
	}
	before := s.Snapshot()
	if o := refresh(3, engine.Fingerprint{1}); o != engine.NotFound {
		t.Fatalf("refresh with a wrong key: %v, want NotFound", o)
	}
	if after := s.Snapshot(); after != before {
		t.Fatalf("a refused refresh changed the state:\n%s\nthen\n%s", before, after)
	}
	lc := k.Lease(v.Lease)
	if r, err := s.DeleteListing(ctx, engine.DeleteListing{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
		LeaseKey: engine.FingerprintOf(&lc)}); err != nil || !r.OK() {
		t.Fatalf("DeleteListing: %v %v", r.Outcome, err)
	}
	before = s.Snapshot()
	if o := refresh(3, engine.FingerprintOf(&pc)); o != engine.NotFound {
		t.Fatalf("refresh of a deleted listing: %v, want NotFound", o)
	}
	if after := s.Snapshot(); after != before {
		t.Fatalf("a refresh of a deleted listing changed the state:\n%s\nthen\n%s", before, after)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// newOneListingStore makes a store under a fresh name holding one listing
// without presence.
func newOneListingStore(t *testing.T, l engine.Limits, clock engine.Clock) (*redisstore.Store, *engine.Keyring, engine.ListingView) {
	t.Helper()
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: redisClient(t), Name: freshName(), Limits: l, Keyring: k, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	views, err := s.CreateListingsPipelined(context.Background(), []engine.CreateListing{{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "o",
		IdempotencyKey: "k", Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	return s, k, views[0]
}
