package memstore

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// walkFixture is a scope over random entries, with what a model needs.
type walkFixture struct {
	sc   BrowseScope
	ents []BrowseEntry
	r    *rand.Rand
}

var walkModes = []string{"coop", "pvp", "duel"}

func (f *walkFixture) randomEntry(n int) BrowseEntry {
	maxP := int32(1 + f.r.IntN(8))
	e := BrowseEntry{ID: uuidN(uint32(n)), Created: int64(f.r.IntN(50)), MaxPlayers: maxP, Players: int32(f.r.IntN(int(maxP) + 1))}
	if f.r.IntN(4) != 0 {
		e.Attrs = append(e.Attrs, engine.Attribute{Name: "level", Num: int64(f.r.IntN(10)), IsNum: true})
	}
	if f.r.IntN(5) != 0 {
		e.Attrs = append(e.Attrs, engine.Attribute{Name: "mode", Str: walkModes[f.r.IntN(len(walkModes))]})
	}
	return e
}

func (f *walkFixture) randomQuery() engine.Browse {
	q := engine.Browse{Limit: 1 + f.r.IntN(7), Order: engine.Order(f.r.IntN(4)), Desc: f.r.IntN(2) == 0}
	switch f.r.IntN(6) {
	case 0:
		q.Filter.MinFreeSlots = int32(f.r.IntN(3))
	case 1:
		q.Filter.MinPlayers, q.Filter.MaxPlayers, q.Filter.HasMaxPlayers = int32(f.r.IntN(3)), int32(f.r.IntN(6)), true
	case 2:
		q.Filter.Strings = []engine.StringFilter{{Name: "mode", Values: walkModes[:1+f.r.IntN(2)]}}
	case 3:
		q.Filter.Numbers = []engine.NumberFilter{{Name: "level", Op: engine.NumOp(f.r.IntN(6)), Value: int64(f.r.IntN(10))}}
	case 4:
		q.Filter.MinFreeSlots = 1
		q.Filter.Strings = []engine.StringFilter{{Name: "mode", Values: walkModes[f.r.IntN(3):][:1]}}
	}
	return q
}

// model is every match of q in q's order.
func (f *walkFixture) model(q *engine.Browse) []engine.UUID {
	var ids []engine.UUID
	f.sc.eachID(func(e setEntry) error {
		en := &f.ents[e.slot]
		if q.Filter.Match(en.Players, en.MaxPlayers, en.Attrs) {
			ids = append(ids, en.ID)
		}
		return nil
	})
	key := func(id engine.UUID) int64 {
		en := &f.ents[int(id[2])<<8|int(id[3])]
		return engine.OrderKey(q.Order, en.Players, en.MaxPlayers, en.Created)
	}
	slices.SortFunc(ids, func(a, b engine.UUID) int {
		c := cmp.Or(cmp.Compare(key(a), key(b)), a.Compare(b))
		if q.Desc {
			return -c
		}
		return c
	})
	return ids
}

// walkAll pages q to the end, returning the IDs in order.
func (f *walkFixture) walkAll(t *testing.T, q engine.Browse) []engine.UUID {
	t.Helper()
	var got []engine.UUID
	var p BrowsePage
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("walk does not end")
		}
		f.sc.Walk(&q, f.ents, 7, &p)
		if p.Examined > engine.BrowseExamineMax || p.N > q.Limit {
			t.Fatalf("page examined %d, returned %d", p.Examined, p.N)
		}
		for _, li := range p.Slots[:p.N] {
			got = append(got, f.ents[li].ID)
		}
		if !p.Next.More {
			return got
		}
		q.HasAfter, q.After, q.AfterKey, q.Since = true, p.Next.After, p.Next.AfterKey, p.Next.Since
	}
}

// TestBrowseWalkModel pages random queries over random scopes, with
// updates between, and compares every walk with a sort of the matches.
func TestBrowseWalkModel(t *testing.T) {
	f := &walkFixture{r: rand.New(rand.NewPCG(1, 2))}
	const n = 200
	f.ents = make([]BrowseEntry, n)
	for i := range n {
		f.ents[i] = f.randomEntry(i)
		if !f.sc.Insert(int32(i), &f.ents[i]) {
			t.Fatal("insert failed")
		}
	}
	returned := 0
	for round := range 300 {
		// Move a few entries: update some, delete and re-insert others.
		for range 5 {
			i := f.r.IntN(n)
			cur := f.randomEntry(i)
			cur.Created = f.ents[i].Created
			if f.r.IntN(3) == 0 && f.sc.Delete(&f.ents[i]) {
				f.ents[i] = cur
				if f.r.IntN(2) == 0 {
					f.sc.Insert(int32(i), &f.ents[i])
				}
			} else if f.sc.Contains(f.ents[i].ID) {
				f.sc.Update(int32(i), &f.ents[i], &cur)
				f.ents[i] = cur
			} else {
				f.ents[i] = cur
				f.sc.Insert(int32(i), &f.ents[i])
			}
		}
		if err := f.sc.Check(f.ents); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		q := f.randomQuery()
		got, want := f.walkAll(t, q), f.model(&q)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: query %+v walked\n%v\nwant\n%v", round, q, got, want)
		}
		returned += len(got)
	}
	if returned < 300*20 {
		t.Fatalf("the walks returned %d listings in all: the queries match too little to test anything", returned)
	}
}

// TestBrowseWalkExamineBound: a filter that matches only the last of many
// entries ends its first pages short, with More and a position that goes
// on, and the walk still finds the match.
func TestBrowseWalkExamineBound(t *testing.T) {
	var sc BrowseScope
	const n = 2500
	ents := make([]BrowseEntry, n)
	for i := range n {
		ents[i] = BrowseEntry{ID: uuidN(uint32(i + 1)), MaxPlayers: 4}
		if i == n-1 {
			ents[i].Attrs = engine.Attributes{{Name: "level", Num: 3, IsNum: true}}
		}
		sc.Insert(int32(i), &ents[i])
	}
	q := engine.Browse{Limit: 10, Filter: engine.BrowseFilter{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpEq, Value: 3}}}}
	var p BrowsePage
	for page := 0; ; page++ {
		sc.Walk(&q, ents, 1, &p)
		if page < 2 {
			if p.N != 0 || !p.Next.More || p.Examined != engine.BrowseExamineMax || p.Next.After.UUID != uuidN(uint32((page+1)*engine.BrowseExamineMax)) {
				t.Fatalf("page %d: %d items, next %+v, examined %d", page, p.N, p.Next, p.Examined)
			}
			q.HasAfter, q.After, q.AfterKey, q.Since = true, p.Next.After, p.Next.AfterKey, p.Next.Since
			continue
		}
		if p.N != 1 || ents[p.Slots[0]].ID != uuidN(n) || p.Next.More {
			t.Fatalf("last page: %d items, next %+v", p.N, p.Next)
		}
		return
	}
}

// TestBrowseWalkSince: in a Mutable order, a continuation skips an entry
// whose key changed after the first page, so it never comes twice.
func TestBrowseWalkSince(t *testing.T) {
	var sc BrowseScope
	ents := make([]BrowseEntry, 4)
	for i := range ents {
		ents[i] = BrowseEntry{ID: uuidN(uint32(i + 1)), MaxPlayers: 8, Players: int32(i)}
		sc.Insert(int32(i), &ents[i])
	}
	q := engine.Browse{Limit: 2, Order: engine.OrderCurrentPlayers}
	var p BrowsePage
	sc.Walk(&q, ents, 5, &p)
	if p.N != 2 || !p.Next.More || p.Next.Since != 5 || p.Next.AfterKey != 1 {
		t.Fatalf("first page %d, next %+v", p.N, p.Next)
	}
	// The first listing returned moves past the position.
	cur := ents[0]
	cur.Players, cur.KeyVersion = 7, 6
	sc.Update(0, &ents[0], &cur)
	ents[0] = cur
	q.HasAfter, q.After, q.AfterKey, q.Since = true, p.Next.After, p.Next.AfterKey, p.Next.Since
	sc.Walk(&q, ents, 6, &p)
	if p.N != 2 || ents[p.Slots[0]].ID != uuidN(3) || ents[p.Slots[1]].ID != uuidN(4) || p.Next.More {
		t.Fatalf("second page %d %v, next %+v", p.N, p.Slots[:p.N], p.Next)
	}
}

// TestOrderedSetAppendFills: entries added past the end (a creation-time
// set) fill whole chunks instead of leaving halves behind.
func TestOrderedSetAppendFills(t *testing.T) {
	var s orderedSet
	for i := range 10 * chunkMax {
		s.insert(setEntry{key: int64(i), id: uuidN(uint32(i)), slot: int32(i)})
	}
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	if len(s.chunks) != 10 {
		t.Fatalf("%d chunks for %d appended entries, want 10", len(s.chunks), 10*chunkMax)
	}
}

// TestOrderedSetDescending seeks and walks backwards against a sorted
// slice.
func TestOrderedSetDescending(t *testing.T) {
	var s orderedSet
	r := rand.New(rand.NewPCG(3, 4))
	var all []setEntry
	for len(all) < 500 {
		e := setEntry{key: int64(r.IntN(10)), id: uuidN(uint32(r.IntN(1 << 20))), slot: int32(len(all))}
		if s.insert(e) {
			all = append(all, e)
		}
	}
	slices.SortFunc(all, func(a, b setEntry) int { return a.pos().cmp(b.pos()) })
	for range 200 {
		p := setPos{key: int64(r.IntN(12) - 1), id: uuidN(uint32(r.IntN(1 << 20)))}
		if r.IntN(3) == 0 {
			p = all[r.IntN(len(all))].pos()
		}
		for _, inclusive := range []bool{false, true} {
			var want []setEntry
			for i := len(all) - 1; i >= 0; i-- {
				if c := all[i].pos().cmp(p); c < 0 || inclusive && c == 0 {
					want = append(want, all[i])
				}
			}
			it := s.seekPos(p, inclusive, true)
			var got []setEntry
			for e, ok := it.next(); ok; e, ok = it.next() {
				got = append(got, e)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("desc seek %v inclusive %v: %d entries, want %d", p, inclusive, len(got), len(want))
			}
		}
	}
}
