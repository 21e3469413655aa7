package memstore

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// Snapshot renders the whole state after cleanup (as any operation would
// see it), deterministically sorted: flags, pool counts, every listing
// (IDs, tenant, owner, version, players, attributes, browse keys, spec,
// doc, deadlines, presence,
// attempts and pending list in order), attempt (bindings, consumed),
// idempotency record, replay entry, revocation, tenant count and browse
// index. Never a fingerprint or capability. O(state); for tests.
func (s *Store) Snapshot() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.cleanup(now)
	var b strings.Builder
	fmt.Fprintf(&b, "instance=%v available=%v draining=%v", s.id, s.available.Load(), s.draining.Load())
	if s.draining.Load() {
		fmt.Fprintf(&b, " drain_deadline=%v", s.drainDeadline)
	}
	fmt.Fprintf(&b, " browse_version=%d", s.browseVersion)
	fmt.Fprintf(&b, "\npools listings=%d presence=%d attempts=%d replay=%d revocations=%d idempotency=%d in_flight=%d tombstones=%d\n",
		s.listings.n, s.nPresence, s.attempts.n, s.replay.n, s.nRevocations(), s.idem.n, s.inFlight, s.tombs.n)

	var lines []string
	for li := range s.listings.all() {
		lines = append(lines, s.snapListing(li))
	}
	for ai, a := range s.attempts.all() {
		lines = append(lines, fmt.Sprintf("attempt %v handle=%v listing=%v tenant=%s/%s client=%q deadline=%v host=%v peer=%v consumed=%v"+
			" relay_only=%v offered=%v host_relayed=%v peer_relayed=%v relay_consumed=%v host_outcome=%v peer_outcome=%v",
			a.id, a.handle, s.listings.at(a.listing).id, s.tenants.at(a.tenant).t.Game, s.tenants.at(a.tenant).t.Env,
			s.subjects.at(a.client).name, s.attemptExp.deadline(ai), snapBinding(a.host.view()), snapBinding(a.peer.view()), a.consumed,
			a.relayOnly, a.offered, a.hostRelay.addrPort(), a.peerRelay.addrPort(), a.relayConsumed, a.hostOut, a.peerOut))
	}
	for ti, t := range s.tombs.all() {
		st, r := t.prog.Ended(t.end)
		lines = append(lines, fmt.Sprintf("tombstone %v listing=%v tenant=%s/%s client=%q owner=%q state=%v reason=%v progress=%+v host_outcome=%v peer_outcome=%v attempt_deadline=%v deadline=%v",
			t.id, t.listing, t.tenant.Game, t.tenant.Env, t.client, t.owner, st, r, t.prog, t.hostOut, t.peerOut, t.deadline, s.tombExp.deadline(ti)))
	}
	for i, r := range s.idem.all() {
		kind, p := unpackKey(r.packed)
		lines = append(lines, fmt.Sprintf("idempotency %v tenant=%s/%s subject=%q key=%q request=%s resource=%v deadline=%v",
			idemKind(kind), p[0], p[1], p[2], p[3], hex.EncodeToString(r.fp[:]), r.res, s.idemExp.deadline(i)))
	}
	for i, r := range s.replay.all() {
		_, p := unpackKey(r.packed)
		lines = append(lines, fmt.Sprintf("replay ns=%q key=%q deadline=%v", p[0], p[1], s.replayHeap.deadline(i)))
	}
	for i, r := range s.subjects.all() {
		line := fmt.Sprintf("subject %q listings=%d attempts=%d", r.name, r.listings.n, r.attempts.n)
		if s.revocations.has(i) {
			line += fmt.Sprintf(" revoked_until=%v", s.revocations.deadline(i))
		}
		lines = append(lines, line)
	}
	for i, r := range s.tenantRevs.all() {
		lines = append(lines, fmt.Sprintf("tenant-revocation %s/%s subject=%q revoked_until=%v", r.tenant.Game, r.tenant.Env, r.subject, s.tenantRevHeap.deadline(i)))
	}
	for _, r := range s.tenants.all() {
		lines = append(lines, fmt.Sprintf("tenant %s/%s listings=%d attempts=%d idempotency=%d refs=%d",
			r.t.Game, r.t.Env, r.counts.listings, r.counts.attempts, r.counts.idem, r.counts.refs()))
	}
	for _, r := range s.browse.all() {
		var ids []string
		r.scope.eachID(func(e setEntry) error { ids = append(ids, e.id.String()); return nil }) // never fails
		t := s.tenants.at(r.tenant).t
		lines = append(lines, fmt.Sprintf("browse %s/%s protocol=%d region=%q refs=%d visible=%v", t.Game, t.Env, r.proto, r.region, r.refs, ids))
	}
	slices.SortFunc(lines, cmp.Compare)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Store) snapListing(li int32) string {
	l := s.listings.at(li)
	t := s.tenants.at(l.tenant).t
	var b strings.Builder
	fmt.Fprintf(&b, "listing %v tenant=%s/%s owner=%q lease=%v version=%d players=%d lease_deadline=%v presence=%v last_seq=%d",
		l.id, t.Game, t.Env, s.subjects.at(l.owner).name, l.lease, l.version, l.players, s.leaseExp.deadline(li), l.presence, l.lastSeq)
	if l.fresh {
		fmt.Fprintf(&b, " presence_deadline=%v endpoint=%v", s.presExp.deadline(li), snapBinding(l.pres.view()))
	} else {
		b.WriteString(" presence_state=absent")
	}
	en := &s.bents[li]
	fmt.Fprintf(&b, " attributes=%v created=%d key_version=%d", en.Attrs, en.Created, en.KeyVersion)
	sp := s.docs[li].spec
	fmt.Fprintf(&b, " spec={region=%q protocol=%d build=%q name=%q visibility=%v trust=%v players=%d max=%d metadata=%q relay_only_joins=%v attributes=%v} doc=%q",
		sp.Region, sp.ProtocolVersion, sp.BuildVersion, sp.DisplayName, sp.Visibility, sp.TrustMode, sp.CurrentPlayers, sp.MaxPlayers, sp.Metadata, sp.RelayOnlyJoins, sp.Attributes, s.docs[li].doc)
	b.WriteString(" attempts=[")
	for ai := s.byListing.first(&l.attempts); ai >= 0; ai = s.byListing.next(ai) {
		fmt.Fprintf(&b, " %v", s.attempts.at(ai).id)
	}
	b.WriteString(" ] pending=[")
	for ai := s.pending.first(&l.pending); ai >= 0; ai = s.pending.next(ai) {
		fmt.Fprintf(&b, " %v", s.attempts.at(ai).handle)
	}
	b.WriteString(" ]")
	return b.String()
}

func snapBinding(b engine.Binding) string {
	if !b.Bound() {
		return "unbound"
	}
	return fmt.Sprintf("%v/%v", b.Public, b.Local)
}
