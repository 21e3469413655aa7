package redisstore

import (
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Routing of hosts and clients to the mediators of a deployment's
// instances. Any instance serves any datagram from the shared state, so a
// route matters for NAT mappings (a host keeps talking to one address),
// not for correctness. Routes are decided from the registry as this
// instance last renewed it (at most lease/4 old, each entry's lease
// deadline kept), so naming one costs no Redis call.

// instanceDraining answers new work (a listing, an attempt) on an instance
// being drained by DrainInstance.
var instanceDraining = engine.Result{Outcome: engine.Draining}

// NewListingMediator is the mediator a new listing's presence goes to: the
// live, not draining instance of highest rendezvous (HRW) weight for the
// listing ID, so every instance with the same view of the registry makes
// the same choice and a departing instance moves only its own listings.
// "" without a registry; this instance's address when no other qualifies.
func (s *Store) NewListingMediator(id engine.ListingID) string {
	if s.reg.lease <= 0 {
		return ""
	}
	if addr := hrw(s.Instances(), id.UUID, time.Now()); addr != "" {
		return addr
	}
	return s.reg.addr
}

// ListingMediator is the mediator of listing id whose host presence last
// reached instance presence (the view's PresenceInstance, or an attempt's
// HostPresenceInstance; zero before the first refresh): that instance's
// while it is live and not draining (a join attempt's mediator, and where
// a host re-resolving its mediator is sent), else the one
// NewListingMediator chooses. "" without a registry.
func (s *Store) ListingMediator(presence engine.UUID, id engine.ListingID) string {
	if s.reg.lease <= 0 {
		return ""
	}
	if presence != (engine.UUID{}) {
		now, l := time.Now(), s.Instances()
		for i := range l {
			if l[i].uuid == presence && l[i].serving(now) {
				return l[i].Addr
			}
		}
	}
	return s.NewListingMediator(id)
}

// hrw picks the address of the instance serving at now whose weight for
// key is highest ("" when there is none).
func hrw(instances []Instance, key engine.UUID, now time.Time) string {
	var best uint64
	addr := ""
	for i := range instances {
		in := &instances[i]
		if !in.serving(now) {
			continue
		}
		if w := hrwWeight(in.ID, key); addr == "" || w > best {
			best, addr = w, in.Addr
		}
	}
	return addr
}

// hrwWeight is FNV-1a over the instance ID and the key, finished with
// splitmix64's mixer so that similar inputs spread: the same on every
// instance and build (no per-process seed).
func hrwWeight(instance string, key engine.UUID) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(instance); i++ {
		h = (h ^ uint64(instance[i])) * 1099511628211
	}
	for _, b := range key {
		h = (h ^ uint64(b)) * 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}
