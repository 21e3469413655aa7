package memstore

import (
	"errors"
	"fmt"

	"github.com/rendezvous/rendezvous/engine"
)

// Check verifies the scope against ents (its entries by slot): every set
// well formed; every listing in exactly one half by ID and the same half
// by players (not full exactly when it has a free slot), in the free
// slots and created sets, each under its entry's keys, and in the set of
// each of its string attribute values; and no set holds anything else.
// O(n); for invariant checks and tests.
func (sc *BrowseScope) Check(ents []BrowseEntry) error {
	for _, set := range []*orderedSet{&sc.open, &sc.full, &sc.openPl, &sc.fullPl, &sc.free, &sc.created} {
		if err := set.check(); err != nil {
			return err
		}
	}
	slots := make(map[engine.UUID]int32, sc.Len())
	notFull, strs := 0, 0
	if err := sc.eachID(func(e setEntry) error {
		if _, dup := slots[e.id]; dup || e.key != 0 || e.slot < 0 || int(e.slot) >= len(ents) || ents[e.slot].ID != e.id {
			return fmt.Errorf("listing %v at slot %d: entry names %v (or in both halves)", e.id, e.slot, entryID(ents, e.slot))
		}
		slots[e.id] = e.slot
		en := &ents[e.slot]
		if en.free() >= 1 {
			notFull++
		}
		for _, a := range en.Attrs {
			if !a.IsNum {
				strs++
			}
		}
		return nil
	}); err != nil {
		return err
	}
	member := func(name string, set *orderedSet, want int, key func(*BrowseEntry) int64, ok func(*BrowseEntry) bool) error {
		if set.len() != want {
			return fmt.Errorf("%s set holds %d, want %d", name, set.len(), want)
		}
		return set.each(func(e setEntry) error {
			li, in := slots[e.id]
			if !in || li != e.slot || e.key != key(&ents[li]) || !ok(&ents[li]) {
				return fmt.Errorf("%s set entry (%d, %v) at slot %d out of step", name, e.key, e.id, e.slot)
			}
			return nil
		})
	}
	any := func(*BrowseEntry) bool { return true }
	zero := func(*BrowseEntry) int64 { return 0 }
	open := func(en *BrowseEntry) bool { return en.free() >= 1 }
	full := func(en *BrowseEntry) bool { return en.free() < 1 }
	players := func(en *BrowseEntry) int64 { return int64(en.Players) }
	for _, c := range []struct {
		name string
		set  *orderedSet
		n    int
		key  func(*BrowseEntry) int64
		ok   func(*BrowseEntry) bool
	}{
		{"free slots", &sc.free, len(slots), func(en *BrowseEntry) int64 { return int64(en.free()) }, any},
		{"created", &sc.created, len(slots), func(en *BrowseEntry) int64 { return en.Created }, any},
		{"not full", &sc.open, notFull, zero, open},
		{"full", &sc.full, len(slots) - notFull, zero, full},
		{"not full by players", &sc.openPl, notFull, players, open},
		{"full by players", &sc.fullPl, len(slots) - notFull, players, full},
	} {
		if err := member(c.name, c.set, c.n, c.key, c.ok); err != nil {
			return err
		}
	}
	inAttrs := 0
	for k, set := range sc.strs {
		if set.len() == 0 {
			return errors.New("empty attribute set kept")
		}
		if err := set.check(); err != nil {
			return err
		}
		inAttrs += set.len()
		has := func(en *BrowseEntry) bool {
			a, ok := en.Attrs.Get(k.name)
			return ok && !a.IsNum && a.Str == k.value
		}
		if err := member(fmt.Sprintf("attribute %s=%q", k.name, k.value), set, set.len(), zero, has); err != nil {
			return err
		}
	}
	if inAttrs != strs {
		return fmt.Errorf("attribute sets hold %d entries, listings have %d string attributes", inAttrs, strs)
	}
	return nil
}

func entryID(ents []BrowseEntry, slot int32) any {
	if slot < 0 || int(slot) >= len(ents) {
		return "nothing"
	}
	return ents[slot].ID
}

// verifyBrowseEntry checks listing slot li's browse entry against its
// record: the same ID, players and max players, valid attributes, a key
// version not after the store's.
func (s *Store) verifyBrowseEntry(li int32) error {
	l, en := s.listings.at(li), &s.bents[li]
	if en.ID != l.id.UUID || en.Players != l.players || en.MaxPlayers != l.maxPlayers {
		return fmt.Errorf("browse entry (%v, %d/%d) disagrees with its record", en.ID, en.Players, en.MaxPlayers)
	}
	if !sameSlice(en.Attrs, s.docs[li].attrs) {
		return errors.New("browse entry and document entry hold different attributes")
	}
	if err := en.Attrs.Validate(); err != nil {
		return fmt.Errorf("browse entry attributes: %w", err)
	}
	if en.KeyVersion > s.browseVersion {
		return fmt.Errorf("key version %d after the store's %d", en.KeyVersion, s.browseVersion)
	}
	return nil
}

// eachID calls f for every listing of the scope in ID order, stopping at
// the first error.
func (sc *BrowseScope) eachID(f func(setEntry) error) error {
	it := mergeIter{a: sc.open.first(false), b: sc.full.first(false), two: true}
	it.fill()
	for e := it.next(); e != nil; e = it.next() {
		if err := f(*e); err != nil {
			return err
		}
	}
	return nil
}

// sameSlice reports whether as and bs are the same slice (not only equal).
func sameSlice(as, bs engine.Attributes) bool {
	return len(as) == len(bs) && (len(as) == 0 || &as[0] == &bs[0])
}
