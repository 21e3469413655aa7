package memstore

import (
	"math"

	"github.com/rendezvous/rendezvous/engine"
)

// The browse walk of docs/contracts/semantics.md#filters-and-order, exported
// so that another store's local copy of the browse index (engine/redisstore's
// browse mirror) plans, filters, bounds and continues a page exactly as this
// store does, with one implementation.

// BrowseEntry is what the browse indexes and the walk read of one listing,
// kept by the caller in a slice indexed by the listing's slot (the slot a
// BrowseScope's entries name). Attrs is replaced, never changed in place.
// KeyVersion is the store's change version when Players last changed (0 if
// never): a continuation in a Mutable order skips entries whose KeyVersion
// is after its Since. Created is the store's creation stamp (OrderCreated).
type BrowseEntry struct {
	ID         engine.UUID
	Attrs      engine.Attributes
	Created    int64
	KeyVersion uint64
	Players    int32
	MaxPlayers int32
}

// free is the entry's free slots as filters and OrderFreeSlots see them.
func (e *BrowseEntry) free() int32 { return e.MaxPlayers - e.Players }

// BrowseScope is the browse indexes of one (tenant, protocol) or one
// (tenant, protocol, region): every visible listing by ID, the not-full
// ones by ID, those with each string attribute value by ID, and all of them
// by (free slots, ID), (current players, ID) and (created, ID). The zero
// value is empty and ready. Not safe for concurrent use.
type BrowseScope struct {
	byID, notFull          orderedSet
	free, players, created orderedSet
	strs                   map[attrValue]*orderedSet
}

// attrValue names one string attribute set: a name and one value.
type attrValue struct{ name, value string }

// Len is the number of listings in the scope.
func (sc *BrowseScope) Len() int { return sc.byID.len() }

// Contains reports whether the listing with ID id is in the scope.
func (sc *BrowseScope) Contains(id engine.UUID) bool {
	it := sc.byID.seekPos(setPos{id: id}, true, false)
	e, ok := it.next()
	return ok && e.id == id
}

// Insert adds the listing at slot with entry e; false (and nothing changes)
// if its ID is present.
func (sc *BrowseScope) Insert(slot int32, e *BrowseEntry) bool {
	if !sc.byID.insert(setEntry{id: e.ID, slot: slot}) {
		return false
	}
	sc.linkKeys(slot, e)
	sc.linkAttrs(slot, e.ID, e.Attrs)
	sc.created.insert(setEntry{key: e.Created, id: e.ID, slot: slot})
	return true
}

// Delete removes the listing e (as it was inserted or last updated); it
// reports whether it was present.
func (sc *BrowseScope) Delete(e *BrowseEntry) bool {
	if !sc.byID.delete(setPos{id: e.ID}) {
		return false
	}
	sc.unlinkKeys(e)
	sc.unlinkAttrs(e.ID, e.Attrs)
	sc.created.delete(setPos{key: e.Created, id: e.ID})
	return true
}

// Update moves the listing at slot from entry old (as inserted or last
// updated) to cur, touching only the sets whose key or membership changed.
// The ID and creation stamp do not change.
func (sc *BrowseScope) Update(slot int32, old, cur *BrowseEntry) {
	if old.Players != cur.Players || old.MaxPlayers != cur.MaxPlayers {
		sc.unlinkKeys(old)
		sc.linkKeys(slot, cur)
	}
	if !sameAttrs(old.Attrs, cur.Attrs) {
		sc.unlinkAttrs(old.ID, old.Attrs)
		sc.linkAttrs(slot, cur.ID, cur.Attrs)
	}
}

// sameAttrs is as.Equal(bs), quick when both are the same slice.
func sameAttrs(as, bs engine.Attributes) bool {
	if len(as) == len(bs) && (len(as) == 0 || &as[0] == &bs[0]) {
		return true
	}
	return as.Equal(bs)
}

func (sc *BrowseScope) linkKeys(slot int32, e *BrowseEntry) {
	free := e.free()
	sc.free.insert(setEntry{key: int64(free), id: e.ID, slot: slot})
	sc.players.insert(setEntry{key: int64(e.Players), id: e.ID, slot: slot})
	if free >= 1 {
		sc.notFull.insert(setEntry{id: e.ID, slot: slot})
	}
}

func (sc *BrowseScope) unlinkKeys(e *BrowseEntry) {
	free := e.free()
	sc.free.delete(setPos{key: int64(free), id: e.ID})
	sc.players.delete(setPos{key: int64(e.Players), id: e.ID})
	if free >= 1 {
		sc.notFull.delete(setPos{id: e.ID})
	}
}

func (sc *BrowseScope) linkAttrs(slot int32, id engine.UUID, as engine.Attributes) {
	for i := range as {
		a := &as[i]
		if a.IsNum {
			continue
		}
		k := attrValue{name: a.Name, value: a.Str}
		set := sc.strs[k]
		if set == nil {
			if sc.strs == nil {
				sc.strs = make(map[attrValue]*orderedSet)
			}
			set = new(orderedSet)
			sc.strs[k] = set
		}
		set.insert(setEntry{id: id, slot: slot})
	}
}

// unlinkAttrs removes id from its attribute sets, and a set once empty, so
// values that come and go leave nothing behind.
func (sc *BrowseScope) unlinkAttrs(id engine.UUID, as engine.Attributes) {
	for i := range as {
		a := &as[i]
		if a.IsNum {
			continue
		}
		k := attrValue{name: a.Name, value: a.Str}
		if set := sc.strs[k]; set != nil {
			set.delete(setPos{id: id})
			if set.len() == 0 {
				delete(sc.strs, k)
			}
		}
	}
}

// BrowsePage is one page of a walk: the slots of the listings to return, in
// order, where the walk goes on, and how many index entries it examined.
type BrowsePage struct {
	Slots    [engine.BrowsePageMax]int32
	N        int
	Next     engine.BrowseNext
	Examined int
}

// maxUUID is after every listing ID.
var maxUUID = engine.UUID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// Walk collects q's page (q validated) into p: the matches of q.Filter in
// q's order after q's continuation, at most q.Limit, examining at most
// engine.BrowseExamineMax index entries. ents holds the scope's entries by
// slot; version is the store's current change version (returned as
// Next.Since on a first page). A nil scope is an empty one. It does not
// allocate.
//
// The planner walks, in OrderID, the smallest of the sets by ID the filter
// allows (every listing; the not-full ones when MinFreeSlots >= 1; those
// with the value of a one-value string filter), and otherwise the order's
// set, starting at and stopping past the key bounds the filter implies.
// Every entry walked is checked with q.Filter.Match. The position returned
// with More is the last entry the page consumed (returned, or examined and
// rejected), so the next page starts right after it.
func (sc *BrowseScope) Walk(q *engine.Browse, ents []BrowseEntry, version uint64, p *BrowsePage) {
	p.N, p.Examined = 0, 0
	p.Next = engine.BrowseNext{Since: q.Since}
	if q.Since == 0 {
		p.Next.Since = version
	}
	if sc == nil {
		return
	}
	set := sc.plan(q)
	if set == nil {
		return
	}
	lo, hi := keyBounds(q)
	desc := q.Desc
	start := setPos{id: q.After.UUID}
	if q.Order != engine.OrderID {
		start.key = q.AfterKey
	}
	var it setIter
	switch {
	case !desc && (!q.HasAfter || start.key < lo):
		it = set.seekPos(setPos{key: lo}, true, false)
	case desc && (!q.HasAfter || start.key > hi):
		it = set.seekPos(setPos{key: hi, id: maxUUID}, true, true)
	default:
		it = set.seekPos(start, false, desc)
	}
	// A continuation in a Mutable order skips what moved after its first
	// page: it may have been returned already under its old key.
	skipMoved := q.HasAfter && q.Since != 0 && q.Order.Mutable()
	check := skipMoved || !q.Filter.IsZero()
	var pos setPos
	for {
		if p.Examined == engine.BrowseExamineMax {
			p.Next.More, p.Next.AfterKey, p.Next.After = true, pos.key, engine.ListingID{UUID: pos.id}
			return
		}
		e, ok := it.next()
		if !ok || !desc && e.key > hi || desc && e.key < lo {
			return
		}
		p.Examined++
		if check {
			en := &ents[e.slot]
			if skipMoved && en.KeyVersion > q.Since || !q.Filter.Match(en.Players, en.MaxPlayers, en.Attrs) {
				pos = e.pos()
				continue
			}
		}
		if p.N == q.Limit {
			p.Next.More, p.Next.AfterKey, p.Next.After = true, pos.key, engine.ListingID{UUID: pos.id}
			return
		}
		p.Slots[p.N] = e.slot
		p.N++
		pos = e.pos()
	}
}

// plan picks the set q walks (nil: nothing can match).
func (sc *BrowseScope) plan(q *engine.Browse) *orderedSet {
	switch q.Order {
	case engine.OrderFreeSlots:
		return &sc.free
	case engine.OrderCurrentPlayers:
		return &sc.players
	case engine.OrderCreated:
		return &sc.created
	}
	best := &sc.byID
	if q.Filter.MinFreeSlots >= 1 {
		best = &sc.notFull
	}
	for i := range q.Filter.Strings {
		sf := &q.Filter.Strings[i]
		if len(sf.Values) != 1 {
			continue
		}
		set := sc.strs[attrValue{name: sf.Name, value: sf.Values[0]}]
		if set == nil {
			return nil
		}
		if set.len() < best.len() {
			best = set
		}
	}
	return best
}

// keyBounds are the least and greatest keys of q's order a match can have.
func keyBounds(q *engine.Browse) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	f := &q.Filter
	switch q.Order {
	case engine.OrderID:
		lo, hi = 0, 0
	case engine.OrderFreeSlots:
		lo = int64(f.MinFreeSlots)
	case engine.OrderCurrentPlayers:
		lo = int64(f.MinPlayers)
		if f.HasMaxPlayers {
			hi = int64(f.MaxPlayers)
		}
	}
	return lo, hi
}

// QuickJoinWalk is the walk a quick join with query q takes
// (docs/contracts/semantics.md#quick-join): q's scope and filter, not full,
// most players first then the highest listing ID, the first n candidates.
func QuickJoinWalk(q *engine.Browse, n int) engine.Browse {
	w := engine.Browse{
		Tenant: q.Tenant, ProtocolVersion: q.ProtocolVersion, Region: q.Region, Limit: n,
		Filter: q.Filter, Order: engine.OrderCurrentPlayers, Desc: true,
	}
	w.Filter.MinFreeSlots = max(w.Filter.MinFreeSlots, 1)
	return w
}
