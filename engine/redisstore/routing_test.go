package redisstore_test

import (
	"context"
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
// that instance lives and is not draining; then the HRW choice.
func TestListingMediatorFollowsPresence(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	a := registeredStore(t, name, "127.0.0.1:4001", 2*time.Second, k)
	b := registeredStore(t, name, "127.0.0.1:4002", 2*time.Second, k)
	ctx := context.Background()
	if err := a.RenewNow(ctx); err != nil {
		t.Fatalf("renew: %v", err)
	}
	v, r, err := a.CreateListing(ctx, registryListing("route"))
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	pc := k.Presence(v.Presence)
	for seq, via := range []*redisstore.Store{a, b, a} {
		if _, r, err := via.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc),
			Seq: uint64(seq + 1), Public: netipAP("203.0.113.10:4000")}); err != nil || !r.OK() {
			t.Fatalf("BindHostPresence: %v %v", r.Outcome, err)
		}
		want := "127.0.0.1:4001"
		if via == b {
			want = "127.0.0.1:4002"
		}
		for _, s := range []*redisstore.Store{a, b} {
			if got := s.ListingMediator(ctx, v.ID); got != want {
				t.Fatalf("after presence reached %s, ListingMediator = %s", want, got)
			}
		}
	}
	if err := a.DrainInstance(ctx); err != nil {
		t.Fatalf("DrainInstance: %v", err)
	}
	if err := b.RenewNow(ctx); err != nil { // learn of the drain
		t.Fatalf("renew: %v", err)
	}
	if got := b.ListingMediator(ctx, v.ID); got != "127.0.0.1:4002" {
		t.Fatalf("presence on a draining instance: ListingMediator = %s, want the other one", got)
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
