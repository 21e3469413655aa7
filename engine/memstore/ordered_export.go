package memstore

import "github.com/rendezvous/rendezvous/engine"

// OrderedSet is the browse indexes' ordered set of (listing ID, slot)
// entries (orderedSet), for another store's local copy of the same index
// (engine/redisstore's browse mirror), so both stores page the same way
// with one implementation. Not safe for concurrent use.
type OrderedSet struct{ s orderedSet }

// Len is the number of entries.
func (o *OrderedSet) Len() int { return o.s.len() }

// Insert adds (id, slot); false (and nothing changes) if id is present.
func (o *OrderedSet) Insert(id engine.UUID, slot int32) bool {
	return o.s.insert(setEntry{id: id, slot: slot})
}

// Delete removes id; it reports whether it was present.
func (o *OrderedSet) Delete(id engine.UUID) bool { return o.s.delete(setPos{id: id}) }

// OrderedIter walks an OrderedSet in ascending ID order; any change to the
// set invalidates it.
type OrderedIter struct{ it setIter }

// Seek returns an iterator at the first entry with ID > after (the first
// entry when !hasAfter).
func (o *OrderedSet) Seek(after engine.UUID, hasAfter bool) OrderedIter {
	return OrderedIter{it: o.s.seek(after, hasAfter)}
}

// Next returns the current entry's ID and slot and advances; ok is false
// at the end.
func (i *OrderedIter) Next() (id engine.UUID, slot int32, ok bool) {
	e, ok := i.it.next()
	return e.id, e.slot, ok
}
