package redisstore

import (
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/rendezvous/rendezvous/engine"
)

// A presence record (scripts/prelude/30_presence_record.lua) is one field
// of the hash "pr": the listing's ID and the presence key's fingerprint,
// binary, so a wrong key finds no record. A fresh presence's value is what the instance sends,
// the script writing it as it came: the sequence (appendSeq), the call's
// reference, the public endpoint's length and the public and local
// endpoints (binary). While the listing has pending offers the record is
// 'p' and that value; idle, it is 'i' and the sequence.
const (
	prRefLen    = 8
	prFieldAt   = len(engine.UUID{}) // the fingerprint follows the ID
	markPending = 'p'
	markIdle    = 'i'
)

// appendPresenceField appends listing id's record field for key.
func appendPresenceField(b []byte, id engine.UUID, key *engine.Fingerprint) []byte {
	return append(append(b, id[:]...), key[:]...)
}

// appendPresenceValue appends a fresh record's value as the scripts take
// it. It begins with the sequence argument, seqLen bytes.
func appendPresenceValue(b []byte, seq uint64, ref *[prRefLen]byte, public, local netip.AddrPort) (_ []byte, seqLen int) {
	at := len(b)
	b = appendSeq(b, seq)
	seqLen = len(b) - at
	b = append(b, ref[:]...)
	at = len(b)
	b = appendBinaryEndpoint(append(b, 0), public)
	b[at] = byte(len(b) - at - 1)
	return appendBinaryEndpoint(b, local), seqLen
}

// appendSeq appends seq as the presence record holds it, so the scripts
// compare sequences as strings: its number of digits as two digits
// (engine.MaxPresenceSeq has 16), then its digits. A day of heartbeats at
// one a second, counted from 1, takes 7 bytes, not 16.
func appendSeq(b []byte, seq uint64) []byte {
	at := len(b)
	b = strconv.AppendUint(append(b, "00"...), seq, 10)
	n := len(b) - at - 2
	b[at], b[at+1] = byte('0'+n/10), byte('0'+n%10)
	return b
}

// appendBinaryEndpoint appends a as the presence record holds it, as
// MemStore keeps it: nothing when absent, else the address (4 bytes for
// IPv4, else 16, the zone dropped) and the port (big-endian).
func appendBinaryEndpoint(b []byte, a netip.AddrPort) []byte {
	switch {
	case !a.IsValid():
		return b
	case a.Addr().Is4():
		ip := a.Addr().As4()
		b = append(b, ip[:]...)
	default:
		ip := a.Addr().As16()
		b = append(b, ip[:]...)
	}
	return binary.BigEndian.AppendUint16(b, a.Port())
}

// parseBinaryEndpoint reads appendBinaryEndpoint's form (invalid when it
// is not one).
func parseBinaryEndpoint(s string) netip.AddrPort {
	switch len(s) {
	case 6:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte([]byte(s[:4]))), binary.BigEndian.Uint16([]byte(s[4:])))
	case 18:
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte([]byte(s[:16]))), binary.BigEndian.Uint16([]byte(s[16:])))
	}
	return netip.AddrPort{}
}

// presenceRecord is a decoded record: the last accepted sequence and,
// while the presence is fresh, whether the listing has pending offers, the
// call reference and the endpoints.
type presenceRecord struct {
	seq           uint64
	fresh         bool
	pending       bool // pn holds the listing's pending offers
	ref           string
	public, local netip.AddrPort
}

func parsePresenceRecord(v string) (presenceRecord, bool) {
	var r presenceRecord
	if v == "" {
		return r, false
	}
	if v[0] == markIdle {
		seq, rest, ok := parseSeq(v[1:])
		r.seq = seq
		return r, ok && rest == ""
	}
	if v[0] == markPending {
		r.pending, v = true, v[1:]
	}
	seq, v, ok := parseSeq(v)
	if !ok || len(v) < prRefLen+1 {
		return r, false
	}
	n, eps := int(v[prRefLen]), v[prRefLen+1:]
	if n > len(eps) {
		return r, false
	}
	r.seq, r.fresh, r.ref = seq, true, v[:prRefLen]
	r.public, r.local = parseBinaryEndpoint(eps[:n]), parseBinaryEndpoint(eps[n:])
	return r, r.public.IsValid() && (n == len(eps) || r.local.IsValid())
}

// parseSeq reads appendSeq's form from the front of s and returns the
// rest.
func parseSeq(s string) (seq uint64, rest string, ok bool) {
	if len(s) < 2 {
		return 0, s, false
	}
	n := int(s[0]-'0')*10 + int(s[1]-'0')
	if n < 1 || n > 16 || len(s) < 2+n {
		return 0, s, false
	}
	seq, err := strconv.ParseUint(s[2:2+n], 10, 64)
	return seq, s[2+n:], err == nil
}

// callRefs hands out the references that name a call's entry,
// "c:<reference>" (scripts/prelude/30_presence_record.lua): a random
// prefix of this instance and a counter. A reference that another live call holds (the script answers
// RETRY) moves the prefix.
type callRefs struct{ prefix, count atomic.Uint32 }

// next is a new reference.
func (c *callRefs) next() [prRefLen]byte { return c.ref(c.count.Add(1)) }

// ref is the reference of count n under the current prefix.
func (c *callRefs) ref(n uint32) (ref [prRefLen]byte) {
	binary.BigEndian.PutUint32(ref[:4], c.prefix.Load())
	binary.BigEndian.PutUint32(ref[4:], n)
	return ref
}

// move draws a new prefix.
func (c *callRefs) move() {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	c.prefix.Store(binary.BigEndian.Uint32(b[:]))
}
