package memstore

import (
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// listingView renders listing slot li at now. Spec and Doc are immutable
// and shared; nothing else aliases store state.
func (s *Store) listingView(li int32, now time.Duration) engine.ListingView {
	l := s.listings.at(li)
	d := s.leaseExp.deadline(li)
	v := engine.ListingView{
		ID: l.id, Lease: l.lease, Presence: l.presence,
		Tenant: s.tenants.at(l.tenant).t, Owner: s.subjects.at(l.owner).name,
		Spec: s.docs[li].spec, Doc: s.docs[li].doc,
		CurrentPlayers: int(l.players), Attributes: s.docs[li].attrs, Version: l.version,
		LeaseExpiresAt: s.wall(d), LeaseTTL: d - now,
		PresenceFresh: l.fresh,
	}
	if l.fresh {
		v.HostPublic, v.HostLocal = l.pres.pub.addrPort(), l.pres.loc.addrPort()
	}
	return v
}

// attemptView renders attempt slot ai at now.
func (s *Store) attemptView(ai int32, now time.Duration) engine.AttemptView {
	a := s.attempts.at(ai)
	l := s.listings.at(a.listing)
	d := s.attemptExp.deadline(ai)
	v := engine.AttemptView{
		ID: a.id, Handle: a.handle, Listing: l.id,
		Tenant: s.tenants.at(a.tenant).t, Client: s.subjects.at(a.client).name,
		ExpiresAt: s.wall(d), TTL: d - now,
		HostPresence: l.presence,
		Host:         a.host.view(), Peer: a.peer.view(), Consumed: a.consumed,
		RelayOnly: a.relayOnly, HostRelayed: a.hostRelay.addrPort(), PeerRelayed: a.peerRelay.addrPort(),
		RelayConsumed: a.relayConsumed,
	}
	if l.fresh {
		v.HostPresencePublic = l.pres.pub.addrPort()
	}
	return v
}

// fillPresenceView renders listing slot li's presence at now into *v,
// every field: TTL left and the oldest PendingOffersMax attempts whose host
// endpoint is unbound. It writes in place: building the view in a local
// and copying it out stalled on store forwarding and was a sixth of a
// batched heartbeat.
func (s *Store) fillPresenceView(v *engine.PresenceView, li int32, now time.Duration) {
	l := s.listings.at(li)
	v.Listing = l.id
	v.TTL = s.presExp.deadline(li) - now
	v.NPending = min(int(l.pending.n), engine.PendingOffersMax)
	ai := s.pending.first(&l.pending)
	for k := range v.Pending {
		if k >= v.NPending {
			v.Pending[k] = engine.Handle{}
			continue
		}
		if k > 0 {
			ai = s.pending.next(ai) // not read past the last one needed: one cache miss less
		}
		v.Pending[k] = s.attempts.at(ai).handle
	}
}

func (s *Store) introduction(ai int32) engine.Introduction {
	a := s.attempts.at(ai)
	return engine.Introduction{Attempt: a.id, Handle: a.handle, Host: a.host.view(), Client: a.peer.view()}
}
