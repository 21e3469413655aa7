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
// (tenant, protocol, region): the visible listings by ID and by (current
// players, ID), each split in those with a free slot and the full ones;
// all of them by (free slots, ID) and by (created, ID); and those with
// each string attribute value by ID. Every listing by ID (or by players)
// is the merge of the two halves, so the split costs nothing in memory,
// and "not full" in either order (quick join's walk among them) is one
// set: no full listing is ever examined. The zero value is empty and
// ready. Not safe for concurrent use.
type BrowseScope struct {
	open, full     orderedSet // by ID
	openPl, fullPl orderedSet // by (current players, ID)
	free, created  orderedSet
	strs           map[attrValue]*orderedSet
}

// attrValue names one string attribute set: a name and one value.
type attrValue struct{ name, value string }

// Len is the number of listings in the scope.
func (sc *BrowseScope) Len() int { return sc.open.len() + sc.full.len() }

// Contains reports whether the listing with ID id is in the scope.
func (sc *BrowseScope) Contains(id engine.UUID) bool { return sc.open.has(id) || sc.full.has(id) }

// has reports whether a set by ID holds id.
func (s *orderedSet) has(id engine.UUID) bool {
	it := s.seekPos(setPos{id: id}, true, false)
	e, ok := it.next()
	return ok && e.id == id
}

// Insert adds the listing at slot with entry e; false (and nothing changes)
// if its ID is present.
func (sc *BrowseScope) Insert(slot int32, e *BrowseEntry) bool {
	if sc.Contains(e.ID) {
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
	if !sc.Contains(e.ID) {
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

// halves are the sets by ID and by players that e belongs to.
func (sc *BrowseScope) halves(e *BrowseEntry) (byID, byPlayers *orderedSet) {
	if e.free() >= 1 {
		return &sc.open, &sc.openPl
	}
	return &sc.full, &sc.fullPl
}

func (sc *BrowseScope) linkKeys(slot int32, e *BrowseEntry) {
	byID, byPlayers := sc.halves(e)
	byID.insert(setEntry{id: e.ID, slot: slot})
	byPlayers.insert(setEntry{key: int64(e.Players), id: e.ID, slot: slot})
	sc.free.insert(setEntry{key: int64(e.free()), id: e.ID, slot: slot})
}

func (sc *BrowseScope) unlinkKeys(e *BrowseEntry) {
	byID, byPlayers := sc.halves(e)
	byID.delete(setPos{id: e.ID})
	byPlayers.delete(setPos{key: int64(e.Players), id: e.ID})
	sc.free.delete(setPos{key: int64(e.free()), id: e.ID})
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
// set (in OrderCurrentPlayers the not-full half alone when MinFreeSlots >=
// 1), starting at and stopping past the key bounds the filter implies.
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
	a, b, implied := sc.plan(q)
	if a == nil {
		return
	}
	lo, hi := keyBounds(q)
	desc := q.Desc
	start := setPos{id: q.After.UUID}
	if q.Order != engine.OrderID {
		start.key = q.AfterKey
	}
	from, inclusive := start, false
	switch {
	case !desc && (!q.HasAfter || start.key < lo):
		from, inclusive = setPos{key: lo}, true
	case desc && (!q.HasAfter || start.key > hi):
		from, inclusive = setPos{key: hi, id: maxUUID}, true
	}
	it := mergeIter{a: a.seekPos(from, inclusive, desc), desc: desc}
	if b != nil {
		it.b, it.two = b.seekPos(from, inclusive, desc), true
	}
	it.fill()
	// A continuation in a Mutable order skips what moved after its first
	// page: it may have been returned already under its old key.
	skipMoved := q.HasAfter && q.Since != 0 && q.Order.Mutable()
	// The filter is checked per entry unless the set walked implies it.
	check := skipMoved || !implied && !q.Filter.IsZero()
	var last *setEntry // the last entry consumed
	for {
		if p.Examined == engine.BrowseExamineMax {
			p.goOn(last)
			return
		}
		e := it.next()
		if e == nil || !desc && e.key > hi || desc && e.key < lo {
			return
		}
		p.Examined++
		if check {
			en := &ents[e.slot]
			if skipMoved && en.KeyVersion > q.Since || !q.Filter.Match(en.Players, en.MaxPlayers, en.Attrs) {
				last = e
				continue
			}
		}
		if p.N == q.Limit {
			p.goOn(last)
			return
		}
		p.Slots[p.N] = e.slot
		p.N++
		last = e
	}
}

// goOn ends the page with More, the walk going on after last.
func (p *BrowsePage) goOn(last *setEntry) {
	p.Next.More, p.Next.AfterKey, p.Next.After = true, last.key, engine.ListingID{UUID: last.id}
}

// plan picks the set q walks, or the two whose merge it walks (a nil:
// nothing can match; b nil: a alone), and whether every entry of it
// matches q's filter (it is "not full" alone, or one string equality
// alone, walked in its own set).
func (sc *BrowseScope) plan(q *engine.Browse) (a, b *orderedSet, implied bool) {
	f := &q.Filter
	open := f.MinFreeSlots >= 1
	notFullOnly := f.MinFreeSlots == 1 && f.MinPlayers == 0 && !f.HasMaxPlayers && len(f.Strings) == 0 && len(f.Numbers) == 0
	switch q.Order {
	case engine.OrderFreeSlots:
		return &sc.free, nil, false
	case engine.OrderCurrentPlayers:
		if open {
			return &sc.openPl, nil, notFullOnly
		}
		return &sc.openPl, &sc.fullPl, false
	case engine.OrderCreated:
		return &sc.created, nil, false
	}
	a, b, n := &sc.open, &sc.full, sc.Len()
	if open {
		b, n, implied = nil, sc.open.len(), notFullOnly
	}
	for i := range f.Strings {
		sf := &f.Strings[i]
		if len(sf.Values) != 1 {
			continue
		}
		set := sc.strs[attrValue{name: sf.Name, value: sf.Values[0]}]
		if set == nil {
			return nil, nil, false
		}
		if set.len() < n {
			a, b, n = set, nil, set.len()
			implied = f.MinFreeSlots == 0 && f.MinPlayers == 0 && !f.HasMaxPlayers && len(f.Strings) == 1 && len(f.Numbers) == 0
		}
	}
	return a, b, implied
}

// mergeIter walks one set, or the merge of two disjoint sets of the same
// order, in one direction, returning entries in place (no copies: the walk
// reads every entry it examines through it).
type mergeIter struct {
	a, b   setIter
	ea, eb *setEntry // the next entry of a, b (nil: none)
	two    bool
	desc   bool
}

// fill loads each side's next entry.
func (m *mergeIter) fill() {
	m.ea = m.a.nextRef()
	if m.two {
		m.eb = m.b.nextRef()
	}
}

// next returns the next entry of the merge, nil at the end.
func (m *mergeIter) next() *setEntry {
	e := m.ea
	if e == nil || m.eb != nil && m.eb.before(e) != m.desc {
		if m.eb == nil {
			return nil
		}
		e = m.eb
		m.eb = m.b.nextRef()
		return e
	}
	m.ea = m.a.nextRef()
	return e
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
