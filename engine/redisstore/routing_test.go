package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// New listings spread over the live instances, every instance chooses the
// same one, and an instance leaving moves only the listings routed to it.
func TestNewListingMediatorIsRendezvousHashing(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	a := registeredStore(t, name, "127.0.0.1:4001", 2*time.Second, k)
	b := registeredStore(t, name, "127.0.0.1:4002", 2*time.Second, k)
	c := registeredStore(t, name, "127.0.0.1:4003", 2*time.Second, k)
	ctx := context.Background()
	for _, s := range []*redisstore.Store{a, b} {
		if err := s.RenewNow(ctx); err != nil { // learn of every instance
			t.Fatalf("renew: %v", err)
		}
	}
	const n = 300
	before := make([]string, n)
	count := map[string]int{}
	for i := range before {
		id := engine.ListingID{UUID: engine.NewUUID()}
		before[i] = a.NewListingMediator(id)
		if got := c.NewListingMediator(id); got != before[i] {
			t.Fatalf("instances disagree on listing %d: %s vs %s", i, before[i], got)
		}
		count[before[i]]++
	}
	for _, addr := range []string{"127.0.0.1:4001", "127.0.0.1:4002", "127.0.0.1:4003"} {
		if count[addr] < n/6 { // a fair share is n/3
			t.Fatalf("routing is lopsided: %v", count)
		}
	}
	ids := make([]engine.ListingID, n)
	for i := range ids {
		ids[i] = engine.ListingID{UUID: engine.NewUUID()}
		before[i] = a.NewListingMediator(ids[i])
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if err := a.RenewNow(ctx); err != nil {
		t.Fatalf("renew: %v", err)
	}
	for i, id := range ids {
		got := a.NewListingMediator(id)
		if got == "127.0.0.1:4002" {
			t.Fatalf("listing %d routed to an instance that left", i)
		}
		if before[i] != "127.0.0.1:4002" && got != before[i] {
			t.Fatalf("listing %d moved from %s to %s though its instance stayed", i, before[i], got)
		}
	}
}

// A listing's mediator is where its host's presence last arrived while
// that instance lives and is not draining; then the HRW choice. Each
// instance names it from a renewal's and a join's view, wherever the
// presence went.
func TestListingMediatorFollowsPresence(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	a := registeredStore(t, name, "127.0.0.1:4001", 2*time.Second, k)
	b := registeredStore(t, name, "127.0.0.1:4002", 2*time.Second, k)
	ctx := context.Background()
	if err := a.RenewNow(ctx); err != nil {
		t.Fatalf("renew: %v", err)
	}
	l := newRoutedListing(t, a, k, "route")
	if l.v.PresenceInstance != (engine.UUID{}) {
		t.Fatalf("a new listing's view names presence instance %s, want none", l.v.PresenceInstance)
	}
	if got, want := l.renewRoute(b), b.NewListingMediator(l.v.ID); got != want {
		t.Fatalf("before any presence, the renewal through b names %s, want the HRW choice %s", got, want)
	}
	for seq, via := range []*redisstore.Store{a, b, a} {
		l.bind(via, uint64(seq+1))
		want := "127.0.0.1:4001"
		if via == b {
			want = "127.0.0.1:4002"
		}
		for _, s := range []*redisstore.Store{a, b} {
			if got := l.renewRoute(s); got != want {
				t.Fatalf("after presence reached %s, a renewal names %s", want, got)
			}
			if got := l.joinRoute(s); got != want {
				t.Fatalf("after presence reached %s, a join names %s", want, got)
			}
		}
	}
	if err := a.DrainInstance(ctx); err != nil {
		t.Fatalf("DrainInstance: %v", err)
	}
	if err := b.RenewNow(ctx); err != nil { // learn of the drain
		t.Fatalf("renew: %v", err)
	}
	if got := l.joinRoute(b); got != "127.0.0.1:4002" {
		t.Fatalf("presence on a draining instance: a join names %s, want the other one", got)
	}
	if got := l.renewRoute(b); got != "127.0.0.1:4002" {
		t.Fatalf("presence on a draining instance: a renewal names %s, want the other one", got)
	}
	if _, r, _ := a.CreateListing(ctx, registryListing("drained")); r.Outcome != engine.Draining {
		t.Fatalf("CreateListing on a draining instance = %v, want Draining", r.Outcome)
	}
	if _, r, _ := b.CreateListing(ctx, registryListing("other")); !r.OK() {
		t.Fatalf("CreateListing on the other instance while one drains = %v, want OK", r.Outcome)
	}
	if !a.Draining() || b.Draining() {
		t.Fatalf("Draining: drained instance %v, other %v; want true, false", a.Draining(), b.Draining())
	}
}

// When the instance a host's presence last reached stops renewing, joins
// and renewals through another name it until its lease expires, then the
// HRW choice among the instances left.
func TestListingMediatorLeavesAnExpiredInstance(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	const lease = time.Second
	b := registeredStore(t, name, "127.0.0.1:4002", lease, k)
	registeredStore(t, name, "127.0.0.1:4003", lease, k)
	a := registeredStore(t, name, "127.0.0.1:4001", lease, k) // its registration lists b and c
	l := newRoutedListing(t, a, k, "expiring")
	l.bind(b, 1)
	b.StopRenewing() // as a killed process: its lease runs out
	if got := l.joinRoute(a); got != "127.0.0.1:4002" {
		t.Fatalf("while b's lease lasts, a join through a names %s, want b", got)
	}
	deadline := time.Now().Add(5 * lease)
	for l.joinRoute(a) == "127.0.0.1:4002" {
		if time.Now().After(deadline) {
			t.Fatalf("joins through a still name b %v after it stopped renewing a %v lease", 5*lease, lease)
		}
		time.Sleep(lease / 20)
	}
	want := a.NewListingMediator(l.v.ID)
	if want != "127.0.0.1:4001" && want != "127.0.0.1:4003" {
		t.Fatalf("the HRW choice without b is %s, want a or c", want)
	}
	if got := l.joinRoute(a); got != want {
		t.Fatalf("after b's lease expired, a join through a names %s, want the HRW choice %s", got, want)
	}
	if got := l.renewRoute(a); got != want {
		t.Fatalf("after b's lease expired, a renewal through a names %s, want the HRW choice %s", got, want)
	}
}

// routedListing is a listing of a deployment of registered stores, with
// what binding its presence, renewing it and joining it need.
type routedListing struct {
	t     *testing.T
	k     *engine.Keyring
	v     engine.ListingView
	joins int
}

func newRoutedListing(t *testing.T, s *redisstore.Store, k *engine.Keyring, key string) *routedListing {
	t.Helper()
	v, r, err := s.CreateListing(context.Background(), registryListing(key))
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	return &routedListing{t: t, k: k, v: v}
}

// bind refreshes the host's presence through s.
func (l *routedListing) bind(s *redisstore.Store, seq uint64) {
	l.t.Helper()
	pc := l.k.Presence(l.v.Presence)
	if _, r, err := s.BindHostPresence(context.Background(), engine.BindPresence{Handle: l.v.Presence,
		Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}); err != nil || !r.OK() {
		l.t.Fatalf("BindHostPresence: %v %v", r.Outcome, err)
	}
}

// renewRoute renews the listing's lease through s and answers the
// mediator s names from the renewal's view, as the API does.
func (l *routedListing) renewRoute(s *redisstore.Store) string {
	l.t.Helper()
	lc := l.k.Lease(l.v.Lease)
	v, r, err := s.RenewLease(context.Background(), engine.RenewLease{Tenant: l.v.Tenant, Owner: l.v.Owner,
		Listing: l.v.ID, Lease: l.v.Lease, LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: l.v.Version, CurrentPlayers: -1})
	if err != nil || !r.OK() {
		l.t.Fatalf("RenewLease: %v %v", r.Outcome, err)
	}
	l.v.Version = v.Version
	return s.ListingMediator(v.PresenceInstance, v.ID)
}

// joinRoute creates a join attempt through s and answers the mediator s
// names from the attempt's view, as the API does.
func (l *routedListing) joinRoute(s *redisstore.Store) string {
	l.t.Helper()
	l.joins++
	v, r, err := s.CreateJoinAttempt(context.Background(), engine.CreateAttempt{Tenant: l.v.Tenant, Client: "client",
		IdempotencyKey: "join-" + strconv.Itoa(l.joins), Listing: l.v.ID, ProtocolVersion: 1})
	if err != nil || !r.OK() {
		l.t.Fatalf("CreateJoinAttempt: %v %v", r.Outcome, err)
	}
	return s.ListingMediator(v.HostPresenceInstance, v.Listing)
}
