package memstore

import "github.com/rendezvous/rendezvous/engine"

// removeListing removes listing slot li with its presence and, through its
// per-listing attempt list, every linked attempt (ended by end): O(its
// attempts).
func (s *Store) removeListing(li int32, end engine.AttemptEnd) {
	for {
		l := s.listings.at(li)
		ai := s.byListing.first(&l.attempts)
		if ai < 0 {
			break
		}
		s.removeAttempt(ai, end)
	}
	l := s.listings.at(li)
	if l.fresh {
		s.expirePresence(li)
	}
	if l.browseAll >= 0 {
		s.browseUnref(l.browseAll)
		s.browseUnref(l.browseRegion)
	}
	s.leaseExp.remove(li)
	owner := l.owner
	s.byOwner.remove(&s.subjects.at(owner).listings, li)
	s.releaseSubject(owner)
	s.listingByID.del(l.id.UUID)
	s.listingByLease.del(l.lease.UUID)
	s.listingByPresence.del(l.presence.UUID)
	s.tenants.at(l.tenant).counts.listings--
	s.tenantUnref(l.tenant)
	s.docs[li] = listingDoc{}
	s.bents[li] = BrowseEntry{}
	s.listingIdem[li] = -1
	s.listings.release(li)
}

// expirePresence ends listing slot li's presence (lastSeq stays).
func (s *Store) expirePresence(li int32) {
	l := s.listings.at(li)
	if !l.fresh {
		panic("BUG: expirePresence of a listing without presence")
	}
	if l.public {
		s.setVisible(li, false)
	}
	s.presExp.remove(li)
	l.fresh = false
	l.pres = binding{}
	s.nPresence--
}

// removeAttempt removes attempt slot ai from every index and list, leaving
// its tombstone.
func (s *Store) removeAttempt(ai int32, end engine.AttemptEnd) {
	s.tombstone(ai, end)
	a := s.attempts.at(ai)
	l := s.listings.at(a.listing)
	s.byListing.remove(&l.attempts, ai)
	if s.pending.has(ai) {
		s.pending.remove(&l.pending, ai)
	}
	client := a.client
	s.byClnt.remove(&s.subjects.at(client).attempts, ai)
	s.releaseSubject(client)
	s.attemptExp.remove(ai)
	s.attemptByID.del(a.id.UUID)
	s.attemptByHandle.del(a.handle.UUID)
	s.tenants.at(a.tenant).counts.attempts--
	s.tenantUnref(a.tenant)
	if !a.consumed && !a.relayConsumed {
		s.inFlight--
	}
	s.attempts.release(ai)
}
