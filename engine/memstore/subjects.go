package memstore

import (
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// subjectRec is one principal the store knows of: it owns listings, created
// attempts, holds idempotency records, or is revoked. It is freed when none of these holds. The lists
// make revocation O(what the subject has), never a scan.
type subjectRec struct {
	hashed
	name     engine.Subject
	listings listHead // owned listings (Store.byOwner)
	attempts listHead // created attempts (Store.byClient)
	idem     int32    // idempotency records of its creations (idemRec.subject)
	// A revocation is this slot being on Store.revocations.
}

// subjectKey is a subject with its seeded hash, computed once per
// operation, before the commit lock is taken.
type subjectKey struct {
	name engine.Subject
	hash uint64
}

func (s *Store) subjectKey(name engine.Subject) subjectKey {
	h := newKeyHasher(s.seed)
	h.str(string(name))
	return subjectKey{name: name, hash: h.sum()}
}

// findSubject returns the slot of k, or -1.
func (s *Store) findSubject(k subjectKey) int32 {
	return chainFind(&s.subjectIdx, &s.subjects, k.hash, func(r *subjectRec) bool { return r.name == k.name })
}

// subjectSlot returns the slot of k, creating it if needed.
func (s *Store) subjectSlot(k subjectKey) int32 {
	if i := s.findSubject(k); i >= 0 {
		return i
	}
	i := s.subjects.alloc()
	r := s.subjects.at(i)
	r.hash = k.hash
	r.name = engine.Subject(strings.Clone(string(k.name))) // never a caller's buffer
	chainInsert(&s.subjectIdx, &s.subjects, i)
	return i
}

// releaseSubject frees slot i if nothing references it any more.
func (s *Store) releaseSubject(i int32) {
	r := s.subjects.at(i)
	if r.listings.n == 0 && r.attempts.n == 0 && r.idem == 0 && !s.revocations.has(i) {
		chainRemove(&s.subjectIdx, &s.subjects, i)
		s.subjects.release(i)
	}
}

// revoked reports whether k has a live revocation (cleanup has run).
func (s *Store) revoked(k subjectKey) bool {
	i := s.findSubject(k)
	return i >= 0 && s.revocations.has(i)
}

// revokedAt is revoked for a read under the shared lock, which runs no
// cleanup: a revocation past its deadline at now counts as absent.
func (s *Store) revokedAt(k subjectKey, now time.Duration) bool {
	i := s.findSubject(k)
	return i >= 0 && s.revocations.has(i) && s.revocations.deadline(i) > now
}
