package memstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// CheckInvariants verifies that every index agrees with the primary records:
// ID, lease and handle maps; browse indexes; per-owner, per-client and
// per-listing lists; pending lists; tenant and pool counts; expiry schedules
// (deadline order, exactly the live records); hash chains; slab free lists.
// It checks the state as found, then runs cleanup (as every operation does)
// and checks again, requiring that nothing past its deadline remains. O(state);
// for tests.
func (s *Store) CheckInvariants() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if err := s.verify(-1); err != nil {
		return fmt.Errorf("before cleanup: %w", err)
	}
	s.cleanup(now)
	if err := s.verify(now); err != nil {
		return fmt.Errorf("after cleanup at %v: %w", now, err)
	}
	return nil
}

// verify checks everything; with now >= 0 it also requires that no record is
// due at now.
func (s *Store) verify(now time.Duration) error {
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"listing slab", s.listings.check}, {"attempt slab", s.attempts.check},
		{"subject slab", s.subjects.check}, {"tenant slab", s.tenants.check},
		{"browse slab", s.browse.check}, {"idempotency slab", s.idem.check},
		{"replay slab", s.replay.check}, {"tenant revocation slab", s.tenantRevs.check},
		{"tombstone slab", s.tombs.check},
		{"tombstone schedule", func() error { return s.tombExp.check(s.tombs.live, now) }},
		{"tombstones", s.verifyTombs},
		{"lease schedule", func() error { return s.leaseExp.check(s.listings.live, now) }},
		{"presence schedule", func() error { return s.presExp.check(s.listings.live, now) }},
		{"attempt schedule", func() error { return s.attemptExp.check(s.attempts.live, now) }},
		{"idempotency schedule", func() error { return s.idemExp.check(s.idem.live, now) }},
		{"replay schedule", func() error { return s.replayHeap.check(s.replay.live, now) }},
		{"revocation schedule", func() error { return s.revocations.check(s.subjects.live, now) }},
		{"tenant revocation schedule", func() error { return s.tenantRevHeap.check(s.tenantRevs.live, now) }},
		{"tenant revocation chains", func() error { return checkChains(&s.tenantRevIdx, &s.tenantRevs) }},
		{"tenant revocations", s.verifyTenantRevocations},
		{"subject chains", func() error { return checkChains(&s.subjectIdx, &s.subjects) }},
		{"tenant chains", func() error { return checkChains(&s.tenantIdx, &s.tenants) }},
		{"browse chains", func() error { return checkChains(&s.browseIdx, &s.browse) }},
		{"idempotency chains", func() error { return checkChains(&s.idemIdx, &s.idem) }},
		{"replay chains", func() error { return checkChains(&s.replayIdx, &s.replay) }},
		{"listings", s.verifyListings},
		{"attempts", s.verifyAttempts},
		{"subjects", s.verifySubjects},
		{"tenants and browse indexes", s.verifyTenants},
		{"keyed records", s.verifyKeyed},
		{"pool counts", s.verifyCounts},
	} {
		if err := c.f(); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if now >= 0 && (!s.available.Load() || (s.draining.Load() && now >= s.drainDeadline)) &&
		s.listings.n+s.attempts.n+s.idem.n > 0 {
		return errors.New("active state left while unavailable or after the drain window")
	}
	if now >= 0 && !s.available.Load() && s.tombs.n > 0 {
		return errors.New("tombstones left while unavailable")
	}
	return nil
}

func (s *Store) verifyListings() error {
	fresh := 0
	for li, l := range s.listings.all() {
		for _, m := range []struct {
			name string
			x    *uuidIndex
			u    engine.UUID
		}{{"id", &s.listingByID, l.id.UUID}, {"lease", &s.listingByLease, l.lease.UUID}, {"presence", &s.listingByPresence, l.presence.UUID}} {
			if got, ok := m.x.get(m.u); !ok || got != li {
				return fmt.Errorf("listing %v: %s map gives %d, %v", l.id, m.name, got, ok)
			}
		}
		if !s.leaseExp.has(li) {
			return fmt.Errorf("listing %v: no lease deadline", l.id)
		}
		if l.fresh != s.presExp.has(li) {
			return fmt.Errorf("listing %v: fresh=%v but presence scheduled=%v", l.id, l.fresh, s.presExp.has(li))
		}
		if l.fresh {
			fresh++
			if !l.pres.bound() || l.lastSeq == 0 {
				return fmt.Errorf("listing %v: fresh presence without endpoint or sequence", l.id)
			}
		} else if l.pres != (binding{}) {
			return fmt.Errorf("listing %v: endpoint kept without presence", l.id)
		}
		if int(li) >= len(s.docs) || s.docs[li].spec == nil || l.version == 0 || !s.tenants.live(l.tenant) || !s.subjects.live(l.owner) {
			return fmt.Errorf("listing %v: bad spec, version, tenant or owner", l.id)
		}
		if !s.byOwner.has(li) {
			return fmt.Errorf("listing %v: not on its owner's list", l.id)
		}
		// Its idempotency record lives exactly IdempotencyTTL-LeaseTTL
		// longer than its lease, whatever the renewals (no live duplicate).
		if ii := s.listingIdem[li]; ii < 0 || !s.idem.live(ii) || s.idem.at(ii).res != l.id.UUID ||
			s.idemExp.deadline(ii)-s.leaseExp.deadline(li) != s.lim.IdempotencyTTL-s.lim.LeaseTTL {
			return fmt.Errorf("listing %v: idempotency record missing or not %v past the lease", l.id, s.lim.IdempotencyTTL-s.lim.LeaseTTL)
		}
		if err := s.verifyListingBrowse(li); err != nil {
			return fmt.Errorf("listing %v: %w", l.id, err)
		}
		if err := checkHeld(&s.byListing, &l.attempts, &s.attempts, func(a *attemptRec) bool { return a.listing == li }, "attempt", "listing"); err != nil {
			return fmt.Errorf("listing %v attempts: %w", l.id, err)
		}
		last := time.Duration(-1 << 63)
		if err := s.pending.check(&l.pending, func(ai int32) error {
			if !s.attempts.live(ai) || s.attempts.at(ai).listing != li || s.attempts.at(ai).host.bound() {
				return fmt.Errorf("attempt slot %d pending wrongly", ai)
			}
			if d := s.attemptExp.deadline(ai); d < last {
				return fmt.Errorf("pending list not oldest first")
			} else {
				last = d
			}
			return nil
		}); err != nil {
			return fmt.Errorf("listing %v pending: %w", l.id, err)
		}
	}
	if fresh != s.nPresence || s.presExp.len() != fresh {
		return fmt.Errorf("%d fresh, presence count %d, scheduled %d", fresh, s.nPresence, s.presExp.len())
	}
	return nil
}

// verifyListingBrowse checks a listing's browse index membership.
func (s *Store) verifyListingBrowse(li int32) error {
	l := s.listings.at(li)
	sp := s.docs[li].spec
	if l.public != (sp.Visibility == engine.Public) || l.proto != sp.ProtocolVersion || int(l.maxPlayers) != sp.MaxPlayers {
		return errors.New("record disagrees with its spec")
	}
	if err := s.verifyBrowseEntry(li); err != nil {
		return err
	}
	if !l.public {
		if l.browseAll != -1 || l.browseRegion != -1 {
			return errors.New("unlisted listing mapped to a browse index")
		}
		return nil
	}
	for _, b := range []struct {
		slot   int32
		region string
	}{{l.browseAll, ""}, {l.browseRegion, sp.Region}} {
		if !s.browse.live(b.slot) {
			return errors.New("public listing without its browse index")
		}
		r := s.browse.at(b.slot)
		if r.tenant != l.tenant || r.proto != l.proto || r.region != b.region {
			return errors.New("public listing mapped to the wrong browse index")
		}
		if found := r.scope.Contains(l.id.UUID); found != l.fresh {
			return fmt.Errorf("in browse index %v, presence fresh %v", found, l.fresh)
		}
	}
	return nil
}

func (s *Store) verifyAttempts() error {
	inFlight := 0
	for ai, a := range s.attempts.all() {
		if got, ok := s.attemptByID.get(a.id.UUID); !ok || got != ai {
			return fmt.Errorf("attempt %v: id map gives %d, %v", a.id, got, ok)
		}
		if got, ok := s.attemptByHandle.get(a.handle.UUID); !ok || got != ai {
			return fmt.Errorf("attempt %v: handle map gives %d, %v", a.id, got, ok)
		}
		if !s.attemptExp.has(ai) || !s.byListing.has(ai) || !s.byClnt.has(ai) {
			return fmt.Errorf("attempt %v: missing from its schedule, listing or client list", a.id)
		}
		if !s.listings.live(a.listing) || s.listings.at(a.listing).tenant != a.tenant || !s.subjects.live(a.client) {
			return fmt.Errorf("attempt %v: bad listing, tenant or client", a.id)
		}
		if s.pending.has(ai) == a.host.bound() {
			return fmt.Errorf("attempt %v: pending=%v with host bound=%v", a.id, s.pending.has(ai), a.host.bound())
		}
		if a.consumed && (!a.host.bound() || !a.peer.bound() || a.relayOnly) {
			return fmt.Errorf("attempt %v: consumed without both endpoints, or relay-only", a.id)
		}
		if err := verifyRelay(a); err != nil {
			return fmt.Errorf("attempt %v: %w", a.id, err)
		}
		if _, ok := s.tombByID.get(a.id.UUID); ok {
			return fmt.Errorf("attempt %v: live and tombstoned", a.id)
		}
		if !a.consumed && !a.relayConsumed {
			inFlight++
		}
	}
	if inFlight != s.inFlight {
		return fmt.Errorf("in flight %d, counted %d", s.inFlight, inFlight)
	}
	return nil
}

func (s *Store) verifySubjects() error {
	idem := make(map[int32]int32)
	for i := range s.idem.all() {
		if si := s.idem.at(i).owner; s.subjects.live(si) {
			idem[si]++
		} else {
			return fmt.Errorf("idempotency slot %d names a free subject slot", i)
		}
	}
	for si, r := range s.subjects.all() {
		if s.findSubject(s.subjectKey(r.name)) != si {
			return fmt.Errorf("subject slot %d not found by its name", si)
		}
		if r.listings.n == 0 && r.attempts.n == 0 && r.idem == 0 && !s.revocations.has(si) {
			return fmt.Errorf("subject slot %d kept without listings, attempts, idempotency records or revocation", si)
		}
		if r.idem != idem[si] {
			return fmt.Errorf("subject slot %d counts %d idempotency records, holds %d", si, r.idem, idem[si])
		}
		if int(r.listings.n) > s.lim.OwnerListingQuota || int(r.attempts.n) > s.lim.SubjectAttemptQuota || int(r.idem) > s.lim.SubjectIdempotencyQuota {
			return fmt.Errorf("subject slot %d over its quota: %d listings, %d attempts, %d idempotency records", si, r.listings.n, r.attempts.n, r.idem)
		}
		if err := checkHeld(&s.byOwner, &r.listings, &s.listings, func(l *listingRec) bool { return l.owner == si }, "listing", "owner"); err != nil {
			return err
		}
		if err := checkHeld(&s.byClnt, &r.attempts, &s.attempts, func(a *attemptRec) bool { return a.client == si }, "attempt", "client"); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) verifyTenants() error {
	counts := make(map[int32]tenantCounts)
	browseRefs := make(map[int32]int)
	visible := make(map[int32]int)
	for _, l := range s.listings.all() {
		c := counts[l.tenant]
		c.listings++
		counts[l.tenant] = c
		if l.browseAll >= 0 {
			browseRefs[l.browseAll]++
			browseRefs[l.browseRegion]++
			if l.fresh {
				visible[l.browseAll]++
				visible[l.browseRegion]++
			}
		}
	}
	for ai := range s.attempts.all() {
		c := counts[s.attempts.at(ai).tenant]
		c.attempts++
		counts[s.attempts.at(ai).tenant] = c
	}
	for i, r := range s.idem.all() {
		if !s.tenants.live(r.tenant) {
			return fmt.Errorf("idempotency slot %d names a free tenant slot", i)
		}
		c := counts[r.tenant]
		c.idem++
		counts[r.tenant] = c
	}
	for ti, r := range s.tenants.all() {
		if s.findTenant(s.tenantKey(r.t)) != ti || r.counts != counts[ti] || r.counts.refs() == 0 && r.tombs.n == 0 {
			return fmt.Errorf("tenant %v counts %+v, records %+v", r.t, r.counts, counts[ti])
		}
		if r.counts.listings > s.lim.TenantListingQuota || r.counts.attempts > s.lim.TenantAttemptQuota ||
			r.counts.idem > s.lim.TenantIdempotencyQuota {
			return fmt.Errorf("tenant %v over a quota: %d listings, %d attempts, %d idempotency records", r.t, r.counts.listings, r.counts.attempts, r.counts.idem)
		}
	}
	for bi, r := range s.browse.all() {
		if s.findBrowse(r.tenant, r.proto, r.region) != bi || r.refs != browseRefs[bi] || r.refs == 0 {
			return fmt.Errorf("browse index %d: refs %d (counted %d)", bi, r.refs, browseRefs[bi])
		}
		if err := r.scope.Check(s.bents); err != nil {
			return fmt.Errorf("browse index %d: %w", bi, err)
		}
		if r.scope.Len() != visible[bi] {
			return fmt.Errorf("browse index %d holds %d, %d visible", bi, r.scope.Len(), visible[bi])
		}
		if err := r.scope.eachID(func(e setEntry) error {
			if !s.listings.live(e.slot) || s.listings.at(e.slot).id.UUID != e.id {
				return fmt.Errorf("browse index %d names a gone listing %v", bi, e.id)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) verifyKeyed() error {
	for i, r := range s.idem.all() {
		if s.findIdem(&idemKey{packed: r.packed, hash: s.hashPacked(r.packed)}) != i || !s.idemExp.has(i) {
			return fmt.Errorf("idempotency slot %d not found by its key or not scheduled", i)
		}
	}
	for i, r := range s.replay.all() {
		if s.findReplay(r.packed, s.hashPacked(r.packed)) != i || !s.replayHeap.has(i) {
			return fmt.Errorf("replay slot %d not found by its key or not scheduled", i)
		}
	}
	return nil
}

func (s *Store) verifyCounts() error {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"listing id map", s.listingByID.len(), s.listings.n},
		{"lease map", s.listingByLease.len(), s.listings.n},
		{"presence handle map", s.listingByPresence.len(), s.listings.n},
		{"lease schedule", s.leaseExp.len(), s.listings.n},
		{"attempt id map", s.attemptByID.len(), s.attempts.n},
		{"attempt handle map", s.attemptByHandle.len(), s.attempts.n},
		{"attempt schedule", s.attemptExp.len(), s.attempts.n},
		{"idempotency schedule", s.idemExp.len(), s.idem.n},
		{"replay schedule", s.replayHeap.len(), s.replay.n},
	} {
		if c.got != c.want {
			return fmt.Errorf("%s has %d, want %d", c.name, c.got, c.want)
		}
	}
	pools := []struct {
		p         engine.Pool
		used, max int
	}{
		{engine.PoolListings, s.listings.n, s.lim.MaxListings}, {engine.PoolPresence, s.nPresence, s.lim.MaxPresence},
		{engine.PoolAttempts, s.attempts.n, s.lim.MaxAttempts}, {engine.PoolReplay, s.replay.n, s.lim.MaxReplay},
		{engine.PoolRevocations, s.nRevocations(), s.lim.MaxRevocations}, {engine.PoolIdempotency, s.idem.n, s.lim.MaxIdempotency},
	}
	for _, x := range []*uuidIndex{&s.listingByID, &s.listingByLease, &s.listingByPresence, &s.attemptByID, &s.attemptByHandle} {
		if err := x.check(); err != nil {
			return err
		}
	}
	for _, p := range pools {
		if p.used > p.max {
			return fmt.Errorf("pool %v over its ceiling: %d > %d", p.p, p.used, p.max)
		}
	}
	for si := int32(0); int(si) < s.subjects.size(); si++ {
		if s.subjects.live(si) && int(s.subjects.at(si).listings.n) > s.lim.OwnerListingQuota {
			return fmt.Errorf("owner over quota")
		}
	}
	return nil
}

// verifyRelay checks an attempt's relay fields: a relayed address only on a
// bound side, the relay introduction only with both, outcome paths known.
func verifyRelay(a *attemptRec) error {
	if a.hostRelay.valid() && !a.host.bound() || a.peerRelay.valid() && !a.peer.bound() {
		return errors.New("relayed address recorded on an unbound side")
	}
	if a.relayConsumed && (!a.hostRelay.valid() || !a.peerRelay.valid()) {
		return errors.New("relay introduction consumed without both relayed addresses")
	}
	if a.hostOut.Reported() && !a.hostOut.Path.Valid() || a.peerOut.Reported() && !a.peerOut.Path.Valid() {
		return errors.New("outcome with an unknown path")
	}
	return nil
}

// verifyTombs checks the tombstones: found by ID, bounded by the attempts
// ceiling, ended by a known cause, counted by the index and the schedule.
func (s *Store) verifyTombs() error {
	for ti, t := range s.tombs.all() {
		if got, ok := s.tombByID.get(t.id.UUID); !ok || got != ti {
			return fmt.Errorf("tombstone %v: id map gives %d, %v", t.id, got, ok)
		}
		if !t.end.Valid() || t.tenant.Validate() != nil || t.client == "" || t.owner == "" {
			return fmt.Errorf("tombstone %v: bad end, tenant or subjects", t.id)
		}
		if !s.tombExp.has(ti) {
			return fmt.Errorf("tombstone %v: not scheduled", t.id)
		}
	}
	perTenant := make(map[int32]int32)
	for _, t := range s.tombs.all() {
		if !s.tenants.live(t.ten) || s.tenants.at(t.ten).t != t.tenant {
			return fmt.Errorf("tombstone %v: names tenant slot %d of another tenant", t.id, t.ten)
		}
		perTenant[t.ten]++
	}
	for ten, r := range s.tenants.all() {
		if r.tombs.n != perTenant[ten] || int(r.tombs.n) > s.lim.MaxAttempts {
			return fmt.Errorf("tenant %v: %d tombstones listed, %d held (at most %d)", r.t, r.tombs.n, perTenant[ten], s.lim.MaxAttempts)
		}
		if err := s.verifyTenantTombs(ten); err != nil {
			return fmt.Errorf("tenant %v tombstones: %w", r.t, err)
		}
	}
	if s.tombByID.len() != s.tombs.n || s.tombExp.len() != s.tombs.n {
		return fmt.Errorf("tombstone index %d, schedule %d, records %d", s.tombByID.len(), s.tombExp.len(), s.tombs.n)
	}
	return s.tombByID.check()
}

// verifyTenantTombs walks tenant slot ten's list of tombstones: linked both
// ways, in deadline order (the schedule's deadlines), each the tenant's and
// as many as it counts.
func (s *Store) verifyTenantTombs(ten int32) error {
	r := s.tenants.at(ten)
	var prev, n int32
	last := time.Duration(-1 << 63)
	for cur := r.tombs.head; cur != 0; cur = s.tombByTenant[cur-1].next {
		i := cur - 1
		if n++; n > r.tombs.n {
			return fmt.Errorf("list longer than its count %d (cycle?)", r.tombs.n)
		}
		nd := s.tombByTenant[i]
		if !s.tombs.live(i) || s.tombs.at(i).ten != ten || nd.prev != prev || nd.dl != s.tombExp.deadline(i) || nd.dl < last {
			return fmt.Errorf("slot %d misplaced (prev %d, want %d)", i, nd.prev-1, prev-1)
		}
		last, prev = nd.dl, cur
	}
	if n != r.tombs.n || r.tombs.tail != prev {
		return fmt.Errorf("%d listed, count %d, tail %d want %d", n, r.tombs.n, r.tombs.tail-1, prev-1)
	}
	return nil
}
