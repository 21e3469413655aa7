package engine

import (
	"crypto/rand"
	"encoding/hex"
)

// UUID is a 16-byte identifier. Its byte order equals the order of its
// lowercase canonical string, so sorting UUIDs sorts their strings too.
type UUID [16]byte

// NewUUID returns a random (version 4) UUID from crypto/rand.
func NewUUID() UUID {
	var u UUID
	_, _ = rand.Read(u[:]) // never fails since Go 1.24: it crashes the process instead
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// ParseUUID accepts only the 8-4-4-4-12 hex form, in any case. It does not allocate.
func ParseUUID[T ~string | ~[]byte](s T) (UUID, bool) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return UUID{}, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// AppendText appends the lowercase canonical form (36 bytes).
func (u UUID) AppendText(dst []byte) []byte {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return append(dst, b[:]...)
}

func (u UUID) String() string { return string(u.AppendText(make([]byte, 0, 36))) }

func (u UUID) IsZero() bool { return u == UUID{} }

// Compare orders UUIDs as their canonical strings order.
func (u UUID) Compare(v UUID) int {
	for i := range u {
		if u[i] != v[i] {
			if u[i] < v[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Distinct identifier kinds. Embedding keeps UUID's methods and keeps each
// kind a comparable 16-byte value usable as a map key.
type (
	ListingID struct{ UUID }
	LeaseID   struct{ UUID }
	AttemptID struct{ UUID }
	// Handle names a presence binding or a join attempt on the UDP side.
	Handle struct{ UUID }
)
