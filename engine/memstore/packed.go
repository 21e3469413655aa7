package memstore

import "encoding/binary"

// A packed key joins the parts of a caller-chosen composite key (tenant,
// subject, idempotency key; replay namespace and key) into one string, each
// part prefixed with its 2-byte length. A record then holds one pointer for
// its whole key, not one per part, and a lookup compares one string.
// Parts are at most 64 KiB (every bounded input is far shorter).

// packKey returns tag followed by the length-prefixed parts.
func packKey(tag byte, parts ...string) string {
	n := 1
	for _, p := range parts {
		n += 2 + len(p)
	}
	b := make([]byte, 1, n)
	b[0] = tag
	for _, p := range parts {
		if len(p) > 0xffff {
			panic("BUG: packKey part too long")
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(b, p...)
	}
	return string(b)
}

// unpackKey splits a packed key back into its tag and parts (for Snapshot).
func unpackKey(s string) (tag byte, parts []string) {
	if len(s) == 0 {
		return 0, nil
	}
	tag, s = s[0], s[1:]
	for len(s) >= 2 {
		n := int(binary.BigEndian.Uint16([]byte(s[:2])))
		if 2+n > len(s) {
			panic("BUG: malformed packed key")
		}
		parts = append(parts, s[2:2+n])
		s = s[2+n:]
	}
	return tag, parts
}

// hashPacked is the seeded hash of a packed key.
func (s *Store) hashPacked(k string) uint64 {
	h := newKeyHasher(s.seed)
	h.str(k)
	return h.sum()
}
