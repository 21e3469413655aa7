package memstore

import (
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// idemKind separates the idempotency namespaces (docs/contracts/semantics.md#idempotent-creation).
type idemKind uint8

const (
	idemListing idemKind = iota + 1
	idemAttempt
	// idemQuickJoin is a quick join's: it creates an attempt too, but its
	// key names a query, not a listing, so it is a namespace of its own.
	idemQuickJoin
)

func (k idemKind) String() string {
	switch k {
	case idemListing:
		return "listing"
	case idemAttempt:
		return "attempt"
	}
	return "quick join"
}

// idemRec remembers one creation: the request fingerprint and the ID of what it
// created, which may be gone by now (then a replay is Expired). Its deadline
// lives in Store.idemExp: IdempotencyTTL after the creation, and for a listing
// IdempotencyTTL after its last renewal, so the record always outlives its
// resource by IdempotencyTTL-LeaseTTL and a replay can never make a live
// duplicate (docs/contracts/semantics.md#idempotent-creation). Attempts are
// never extended, and AttemptTTL <= IdempotencyTTL.
type idemRec struct {
	hashed
	packed string // packKey(kind, game, env, subject, key): one pointer per record
	fp     [32]byte
	res    engine.UUID // ListingID or AttemptID
	tenant int32       // tenants slot: the record is counted in its usage
	owner  int32       // subjects slot of the creator: counted in its idem
}

// idemKey names an idempotency record: (kind, tenant, subject, key) packed
// into one string, with its seeded hash, both made before the commit lock is
// taken.
type idemKey struct {
	packed string
	hash   uint64
}

func (s *Store) idemKey(kind idemKind, t engine.Tenant, subject engine.Subject, key string) idemKey {
	p := packKey(byte(kind), t.Game, t.Env, string(subject), key)
	return idemKey{packed: p, hash: s.hashPacked(p)}
}

// findIdem returns the slot of the record, or -1.
func (s *Store) findIdem(k *idemKey) int32 {
	return chainFind(&s.idemIdx, &s.idem, k.hash, func(r *idemRec) bool { return r.packed == k.packed })
}

// addIdem records a creation by subject slot si in tenant slot ti (the
// caller has checked the pool and quotas) and returns its slot.
func (s *Store) addIdem(k *idemKey, ti, si int32, fp [32]byte, res engine.UUID, deadline time.Duration) int32 {
	i := s.idem.alloc()
	r := s.idem.at(i)
	r.hash = k.hash
	r.packed = k.packed // made by idemKey, never a caller's buffer
	r.fp = fp
	r.res = res
	r.tenant, r.owner = ti, si
	s.tenants.at(ti).counts.idem++
	s.subjects.at(si).idem++
	chainInsert(&s.idemIdx, &s.idem, i)
	s.idemExp.push(i, deadline)
	return i
}

func (s *Store) removeIdem(i int32) {
	ti, si := s.idem.at(i).tenant, s.idem.at(i).owner
	s.idemExp.remove(i)
	chainRemove(&s.idemIdx, &s.idem, i)
	s.idem.release(i)
	s.tenants.at(ti).counts.idem--
	s.tenantUnref(ti)
	s.subjects.at(si).idem--
	s.releaseSubject(si)
}

// attemptFingerprint is the request fingerprint of a join: the listing ID,
// protocol version and relay-only request, encoded exactly.
func attemptFingerprint(l engine.ListingID, proto uint32, relayOnly bool) [32]byte {
	var fp [32]byte
	copy(fp[:16], l.UUID[:])
	fp[16] = byte(proto >> 24)
	fp[17] = byte(proto >> 16)
	fp[18] = byte(proto >> 8)
	fp[19] = byte(proto)
	if relayOnly {
		fp[20] = 1
	}
	return fp
}
