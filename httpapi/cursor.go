package httpapi

import (
	"encoding/base64"
	"encoding/binary"

	"github.com/rendezvous/rendezvous/engine"
)

// A browse cursor (next_cursor, docs/contracts/http.md#browse-listings) is
// where a page ended, opaque to clients: base64url without padding of
// version (1 byte), order, direction, the order key of the last position
// (8 bytes, big endian), its listing ID (16) and the walk's change version
// (8). Everything in it is checked when it comes back: a client can only
// hand back a position, which moves its own walk and nothing else.
type cursor struct {
	order engine.Order
	desc  bool
	key   int64
	after engine.ListingID
	since uint64
}

const (
	cursorVersion = 1
	cursorRawLen  = 3 + 8 + 16 + 8
)

// cursorEncoding rejects non-canonical trailing bits, so one position has
// one spelling.
var cursorEncoding = base64.RawURLEncoding.Strict()

// cursorTextLen is the length of an encoded cursor.
var cursorTextLen = cursorEncoding.EncodedLen(cursorRawLen)

// cursorOf is the cursor that continues a page of q that ended at next.
// Only a walk in a Mutable order uses its change version: in the others it
// is left out (0), so a position has one cursor.
func cursorOf(q *engine.Browse, next *engine.BrowseNext) cursor {
	c := cursor{order: q.Order, desc: q.Desc, key: next.AfterKey, after: next.After}
	if q.Order.Mutable() {
		c.since = next.Since
	}
	return c
}

// append appends c's text.
func (c *cursor) append(b []byte) []byte {
	var raw [cursorRawLen]byte
	raw[0], raw[1] = cursorVersion, byte(c.order)
	if c.desc {
		raw[2] = 1
	}
	binary.BigEndian.PutUint64(raw[3:], uint64(c.key))
	copy(raw[11:], c.after.UUID[:])
	binary.BigEndian.PutUint64(raw[27:], c.since)
	return cursorEncoding.AppendEncode(b, raw[:])
}

// decode reads a cursor's text, reporting whether it is one this API
// could have issued.
func (c *cursor) decode(text []byte) bool {
	var raw [cursorRawLen]byte
	if len(text) != cursorTextLen {
		return false
	}
	if n, err := cursorEncoding.Decode(raw[:], text); err != nil || n != cursorRawLen {
		return false
	}
	if raw[0] != cursorVersion || raw[1] > byte(engine.OrderCreated) || raw[2] > 1 {
		return false
	}
	*c = cursor{order: engine.Order(raw[1]), desc: raw[2] == 1, key: int64(binary.BigEndian.Uint64(raw[3:])),
		since: binary.BigEndian.Uint64(raw[27:])}
	copy(c.after.UUID[:], raw[11:27])
	switch c.order {
	case engine.OrderID:
		return c.key == 0
	case engine.OrderFreeSlots, engine.OrderCurrentPlayers:
		return c.key >= 0 && c.key <= engine.MaxPlayers
	default: // a creation stamp
		return c.key >= 0
	}
}
