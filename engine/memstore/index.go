package memstore

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// nShards is the number of shards of every hashIndex: maps stay small (about
// 400 entries each at the default 25,000 listings) and rehash cheaply.
const nShards = 64

// newSeed returns the per-process random seed for hashing caller-chosen
// keys (subjects, tenants, idempotency keys, replay keys), so a caller
// cannot craft keys that collide in one shard or chain.
func newSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24: it crashes the process instead
	return binary.LittleEndian.Uint64(b[:])
}

// keyHasher hashes a sequence of strings and numbers with a seed. Every part
// is length-prefixed, so ("ab","c") and ("a","bc") hash differently. It lives
// on the stack and does not allocate.
type keyHasher struct{ d xxhash.Digest }

func newKeyHasher(seed uint64) keyHasher {
	var h keyHasher
	h.d.ResetWithSeed(seed)
	return h
}

func (h *keyHasher) str(s string) {
	h.num(uint64(len(s)))
	h.d.WriteString(s) // never fails
}

func (h *keyHasher) num(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.d.Write(b[:]) // never fails
}

func (h *keyHasher) sum() uint64 { return h.d.Sum64() }

// hashed is embedded in records found through a hashIndex: the key's seeded
// hash and the next slot of the same hash chain (-1 = none).
type hashed struct {
	hash uint64
	next int32
}

func (h *hashed) hdr() *hashed { return h }

// hashIndex maps a 64-bit seeded hash to the first slot of a chain of
// records with that hash; callers compare full keys along the chain, so a
// 64-bit collision costs one extra comparison, never a wrong answer.
// Sharded by the hash's low bits. Not safe for concurrent use.
type hashIndex struct{ m [nShards]map[uint64]int32 }

func (x *hashIndex) head(h uint64) int32 {
	if v, ok := x.m[h%nShards][h]; ok {
		return v
	}
	return -1
}

func (x *hashIndex) setHead(h uint64, i int32) {
	s := &x.m[h%nShards]
	if i < 0 {
		delete(*s, h)
		return
	}
	if *s == nil {
		*s = make(map[uint64]int32)
	}
	(*s)[h] = i
}

func (x *hashIndex) len() int {
	n := 0
	for i := range x.m {
		n += len(x.m[i])
	}
	return n
}

// hashedRec is a record embedding hashed.
type hashedRec[T any] interface {
	*T
	hdr() *hashed
}

// chainFind returns the slot on hash's chain whose record is the one
// sought (is compares the full key; the hash is compared here), or -1.
func chainFind[T any, P hashedRec[T]](x *hashIndex, s *slab[T], hash uint64, is func(*T) bool) int32 {
	for i := x.head(hash); i >= 0; {
		r := s.at(i)
		hd := P(r).hdr()
		if hd.hash == hash && is(r) {
			return i
		}
		i = hd.next
	}
	return -1
}

// chainInsert links slot i (whose hdr().hash is set) at the head of its chain.
func chainInsert[T any, P hashedRec[T]](x *hashIndex, s *slab[T], i int32) {
	hd := P(s.at(i)).hdr()
	hd.next = x.head(hd.hash)
	x.setHead(hd.hash, i)
}

// chainRemove unlinks slot i from its chain.
func chainRemove[T any, P hashedRec[T]](x *hashIndex, s *slab[T], i int32) {
	hd := P(s.at(i)).hdr()
	j := x.head(hd.hash)
	if j == i {
		x.setHead(hd.hash, hd.next)
		return
	}
	for j >= 0 {
		jh := P(s.at(j)).hdr()
		if jh.next == i {
			jh.next = hd.next
			return
		}
		j = jh.next
	}
	panic("BUG: chainRemove of a slot not on its chain")
}
