package memstore

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func TestChain(t *testing.T) {
	var c chain
	var h listHead
	want := func(slots ...int32) {
		t.Helper()
		if err := c.check(&h, nil); err != nil {
			t.Fatalf("check: %v", err)
		}
		var got []int32
		for i := c.first(&h); i >= 0; i = c.next(i) {
			got = append(got, i)
		}
		if !slices.Equal(got, slots) {
			t.Fatalf("list = %v, want %v", got, slots)
		}
	}
	want()
	c.pushBack(&h, 3)
	want(3)
	c.pushBack(&h, 0)
	c.pushBack(&h, 7)
	want(3, 0, 7)
	c.remove(&h, 0) // middle
	want(3, 7)
	c.insertBefore(&h, 5, 3) // new head
	want(5, 3, 7)
	c.remove(&h, 7) // tail
	want(5, 3)
	c.remove(&h, 5) // head
	want(3)
	c.remove(&h, 3)
	want()
	if c.has(3) || h != (listHead{}) {
		t.Fatalf("emptied list left state: %+v", h)
	}
	mustPanic(t, "double push", func() { c.pushBack(&h, 1); c.pushBack(&h, 1) })
	mustPanic(t, "remove unlinked", func() { c.remove(&h, 2) })
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s: no panic", name)
		}
	}()
	f()
}

func TestExpiryList(t *testing.T) {
	var e expiryList
	live := func(int32) bool { return true }
	f := func(now time.Duration, wantDue ...int32) {
		t.Helper()
		if err := e.check(live, -1); err != nil {
			t.Fatalf("check: %v", err)
		}
		var got []int32
		for i := e.due(now); i >= 0; i = e.due(now) {
			got = append(got, i)
			e.remove(i)
		}
		if !slices.Equal(got, wantDue) {
			t.Fatalf("due at %v = %v, want %v", now, got, wantDue)
		}
		if err := e.check(live, now); err != nil {
			t.Fatalf("check after draining: %v", err)
		}
	}
	f(100)
	e.push(1, 10)
	e.push(2, 20)
	e.push(3, 20) // equal deadlines keep insertion order
	e.push(4, 30)
	f(9)
	f(10, 1)
	e.refresh(2, 40) // refresh moves to the tail
	f(20, 3)
	e.push(5, 35) // earlier than the tail: placed in order
	e.push(6, 5)  // earlier than everything: new head
	e.push(7, 40)
	if e.len() != 5 {
		t.Fatalf("len = %d, want 5", e.len())
	}
	f(35, 6, 4, 5)
	f(40, 2, 7)
	if e.len() != 0 || e.has(2) {
		t.Fatalf("schedule not empty")
	}
}

func TestExpiryListRandom(t *testing.T) {
	var e expiryList
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Duration(0)
	on := map[int32]bool{}
	for step := 0; step < 5000; step++ {
		i := int32(r.IntN(64))
		switch {
		case on[i] && r.IntN(3) == 0:
			e.remove(i)
			delete(on, i)
		case on[i]:
			e.refresh(i, now+time.Duration(r.IntN(50)))
		default:
			e.push(i, now+time.Duration(r.IntN(50)))
			on[i] = true
		}
		now += time.Duration(r.IntN(3))
		for j := e.due(now); j >= 0; j = e.due(now) {
			if e.deadline(j) > now {
				t.Fatalf("due slot %d not due", j)
			}
			e.remove(j)
			delete(on, j)
		}
		if err := e.check(func(i int32) bool { return on[i] }, now); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if e.len() != len(on) {
			t.Fatalf("step %d: len %d, want %d", step, e.len(), len(on))
		}
	}
}

func TestDeadlineHeap(t *testing.T) {
	var h deadlineHeap
	r := rand.New(rand.NewPCG(3, 4))
	want := map[int32]time.Duration{}
	live := func(i int32) bool { _, ok := want[i]; return ok }
	for step := 0; step < 5000; step++ {
		i := int32(r.IntN(100))
		switch _, ok := want[i]; {
		case ok && r.IntN(2) == 0:
			h.remove(i)
			delete(want, i)
		default:
			d := time.Duration(r.IntN(1000))
			h.set(i, d) // insert or re-time (up or down)
			want[i] = d
		}
		if err := h.check(live, -1); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for j, d := range want {
			if !h.has(j) || h.deadline(j) != d {
				t.Fatalf("step %d: slot %d deadline wrong", step, j)
			}
		}
	}
	// Draining pops in deadline order.
	last := time.Duration(-1)
	for i := h.due(1 << 40); i >= 0; i = h.due(1 << 40) {
		if want[i] < last {
			t.Fatalf("popped %v after %v", want[i], last)
		}
		last = want[i]
		h.remove(i)
		delete(want, i)
	}
	if len(want) != 0 || h.len() != 0 {
		t.Fatalf("heap not drained: %d left", len(want))
	}
	if h.due(0) != -1 {
		t.Fatalf("empty heap reports a due slot")
	}
}

func uuidN(n uint32) engine.UUID {
	var u engine.UUID
	u[0], u[1], u[2], u[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return u
}

func TestOrderedSet(t *testing.T) {
	var s orderedSet
	f := func(after int, hasAfter bool, want ...uint32) {
		t.Helper()
		if err := s.check(); err != nil {
			t.Fatalf("check: %v", err)
		}
		it := s.seek(uuidN(uint32(after)), hasAfter)
		var got []uint32
		for e, ok := it.next(); ok; e, ok = it.next() {
			got = append(got, uint32(e.id[3])|uint32(e.id[2])<<8)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seek(%d, %v) = %v, want %v", after, hasAfter, got, want)
		}
	}
	f(0, false)
	f(5, true)
	if s.delete(setPos{id: uuidN(1)}) {
		t.Fatalf("delete from empty set succeeded")
	}
	for _, n := range []uint32{5, 1, 9, 3} {
		if !s.insert(setEntry{id: uuidN(n), slot: int32(n)}) {
			t.Fatalf("insert %d failed", n)
		}
	}
	if s.insert(setEntry{id: uuidN(5)}) {
		t.Fatalf("duplicate insert succeeded")
	}
	f(0, false, 1, 3, 5, 9)
	f(3, true, 5, 9) // after a present ID
	f(4, true, 5, 9) // after an absent ID
	f(9, true)       // after the last
	f(0, true, 1, 3, 5, 9)
	if !s.delete(setPos{id: uuidN(3)}) || s.delete(setPos{id: uuidN(3)}) || s.delete(setPos{id: uuidN(4)}) {
		t.Fatalf("delete results wrong")
	}
	f(0, false, 1, 5, 9)
}

func TestOrderedSetRandom(t *testing.T) {
	var s orderedSet
	r := rand.New(rand.NewPCG(5, 6))
	ref := map[uint32]bool{}
	for step := 0; step < 20000; step++ {
		n := uint32(r.IntN(2000))
		// Phases: grow, shrink, grow, to exercise splits and merges.
		grow := (step/5000)%2 == 0
		if grow == (r.IntN(4) != 0) {
			if s.insert(setEntry{id: uuidN(n), slot: int32(n)}) == ref[n] {
				t.Fatalf("step %d: insert %d result wrong", step, n)
			}
			ref[n] = true
		} else {
			if s.delete(setPos{id: uuidN(n)}) != ref[n] {
				t.Fatalf("step %d: delete %d result wrong", step, n)
			}
			delete(ref, n)
		}
		if step%97 == 0 {
			if err := s.check(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			after := uint32(r.IntN(2100))
			it := s.seek(uuidN(after), true)
			e, ok := it.next()
			want := uint32(0)
			found := false
			for k := after + 1; k < 2000; k++ {
				if ref[k] {
					want, found = k, true
					break
				}
			}
			if ok != found || (ok && e.id != uuidN(want)) || (ok && e.slot != int32(want)) {
				t.Fatalf("step %d: seek after %d = %v %v, want %d %v", step, after, e.id, ok, want, found)
			}
		}
	}
	if s.len() != len(ref) {
		t.Fatalf("len %d, want %d", s.len(), len(ref))
	}
	if len(s.chunks) > 2*len(ref)/chunkMax*4+2 {
		t.Fatalf("%d chunks for %d entries: merges missing", len(s.chunks), len(ref))
	}
}

func TestSlab(t *testing.T) {
	var s slab[listingRec]
	a, b, c := s.alloc(), s.alloc(), s.alloc()
	s.at(b).version = 7
	s.release(b)
	if s.live(b) || !s.live(a) || !s.live(c) || s.live(-1) || s.live(99) {
		t.Fatalf("live flags wrong")
	}
	if d := s.alloc(); d != b || s.at(d).version != 0 {
		t.Fatalf("free slot not reused zeroed: %d", d)
	}
	if err := s.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	mustPanic(t, "double release", func() { s.release(a); s.release(a) })
}

type testRec struct {
	hashed
	name string
}

func TestHashIndexCollisions(t *testing.T) {
	var x hashIndex
	var s slab[testRec]
	add := func(name string, h uint64) int32 {
		i := s.alloc()
		s.at(i).hash, s.at(i).name = h, name
		chainInsert(&x, &s, i)
		return i
	}
	find := func(name string, h uint64) int32 {
		for i := x.head(h); i >= 0; i = s.at(i).next {
			if s.at(i).hash == h && s.at(i).name == name {
				return i
			}
		}
		return -1
	}
	// Three keys forced onto one 64-bit hash: full comparison keeps them apart.
	a, b, c := add("a", 42), add("b", 42), add("c", 42)
	d := add("d", 42+nShards) // same shard, other hash
	for _, k := range []struct {
		name string
		h    uint64
		want int32
	}{{"a", 42, a}, {"b", 42, b}, {"c", 42, c}, {"d", 42 + nShards, d}, {"e", 42, -1}, {"a", 43, -1}} {
		if got := find(k.name, k.h); got != k.want {
			t.Fatalf("find(%q, %d) = %d, want %d", k.name, k.h, got, k.want)
		}
	}
	if err := checkChains(&x, &s); err != nil {
		t.Fatal(err)
	}
	chainRemove(&x, &s, b) // middle of the chain
	s.release(b)
	chainRemove(&x, &s, c) // head of the chain
	s.release(c)
	if find("a", 42) != a || find("b", 42) != -1 || find("c", 42) != -1 {
		t.Fatalf("removal broke the chain")
	}
	chainRemove(&x, &s, a)
	s.release(a)
	if x.head(42) != -1 || x.len() != 1 {
		t.Fatalf("empty chain left in the index")
	}
	if err := checkChains(&x, &s); err != nil {
		t.Fatal(err)
	}
}

func TestKeyHasher(t *testing.T) {
	h := func(seed uint64, parts ...string) uint64 {
		k := newKeyHasher(seed)
		for _, p := range parts {
			k.str(p)
		}
		return k.sum()
	}
	if h(1, "ab", "c") == h(1, "a", "bc") {
		t.Fatalf("parts are not length-prefixed")
	}
	if h(1, "x") == h(2, "x") {
		t.Fatalf("seed ignored")
	}
	if h(1, "x") != h(1, "x") {
		t.Fatalf("not deterministic")
	}
}

func TestUUIDIndex(t *testing.T) {
	var x uuidIndex
	var us []engine.UUID
	for i := 0; i < 1000; i++ {
		u := engine.NewUUID()
		us = append(us, u)
		x.put(u, int32(i))
	}
	if err := x.check(); err != nil {
		t.Fatal(err)
	}
	for i, u := range us {
		if got, ok := x.get(u); !ok || got != int32(i) {
			t.Fatalf("get(%v) = %d, %v", u, got, ok)
		}
	}
	other := us[0]
	other[3] ^= 1 // another UUID
	if _, ok := x.get(other); ok {
		t.Fatalf("an unknown UUID was found")
	}
	for _, u := range us[:500] {
		x.del(u)
	}
	x.del(other) // absent: a no-op
	if x.len() != 500 {
		t.Fatalf("len = %d, want 500", x.len())
	}
	if _, ok := x.get(us[10]); ok {
		t.Fatalf("deleted UUID found")
	}
	if got, ok := x.get(us[700]); !ok || got != 700 {
		t.Fatalf("surviving UUID lost")
	}
}

// TestUUIDIndexRandom drives the open-addressing table against a map with
// a small key pool, so probe runs wrap around the table's end and
// deletions shift runs back across it.
func TestUUIDIndexRandom(t *testing.T) {
	var x uuidIndex
	r := rand.New(rand.NewPCG(3, 4))
	pool := make([]engine.UUID, 40)
	for i := range pool {
		pool[i] = engine.NewUUID()
	}
	want := map[engine.UUID]int32{}
	for step := 0; step < 20000; step++ {
		u := pool[r.IntN(len(pool))]
		if _, ok := want[u]; ok && r.IntN(2) == 0 {
			x.del(u)
			delete(want, u)
		} else {
			v := int32(r.IntN(1000))
			x.put(u, v)
			want[u] = v
		}
		if err := x.check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, p := range pool {
			got, ok := x.get(p)
			if w, wok := want[p]; ok != wok || got != w {
				t.Fatalf("step %d: get = %d, %v; want %d, %v", step, got, ok, w, wok)
			}
		}
	}
	if x.len() != len(want) || len(x.tab) > 64 {
		t.Fatalf("len %d (want %d), table %d cells for at most 40 keys", x.len(), len(want), len(x.tab))
	}
}

func TestPackKey(t *testing.T) {
	if packKey(1, "ab", "c") == packKey(1, "a", "bc") || packKey(1, "x") == packKey(2, "x") || packKey(1, "", "x") == packKey(1, "x", "") {
		t.Fatalf("packed keys are ambiguous")
	}
	tag, parts := unpackKey(packKey(7, "game", "", "subject ü", string(make([]byte, 300))))
	if tag != 7 || len(parts) != 4 || parts[0] != "game" || parts[1] != "" || parts[2] != "subject ü" || len(parts[3]) != 300 {
		t.Fatalf("round trip = %d %q", tag, parts)
	}
}
